"""Fixtures of the store of record's tests: a database path and a store in ``tmp_path``, each
test run on both stores of record: SQLite, and PostgreSQL on a fresh database of the test
process's throwaway server (tests/fixtures/postgres.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cognitive_memory.storage import SQLiteMemoryStore
from cognitive_memory.storage.postgres import PostgresMemoryStore

Store = SQLiteMemoryStore | PostgresMemoryStore

# The stores of record the suite runs on; a test file about one of them overrides ``store``.
STORES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "db" / "memories.db"


@pytest.fixture(params=STORES)
def store_kind(request: pytest.FixtureRequest) -> str:
    """Which store of record the test runs on: ``sqlite`` or ``postgres``."""
    return str(request.param)


@pytest.fixture
def open_store(
    request: pytest.FixtureRequest, store_kind: str, db_path: Path
) -> Iterator[Callable[[str], Store]]:
    """Open a store of the test's kind (each call one more, all closed after the test) on the
    database named ``name``: the same name, the same database."""
    urls: dict[str, str] = {}
    opened: list[Store] = []
    # Asked for first, so that its databases are dropped after the stores on them are closed.
    make_database = request.getfixturevalue("postgres_database") if store_kind == "postgres" else None

    def open_one(name: str = "memories") -> Store:
        path = db_path.with_name(f"{name}.db")
        if make_database is not None:
            if name not in urls:
                urls[name] = make_database()
            opened.append(PostgresMemoryStore(urls[name], path))
        else:
            opened.append(SQLiteMemoryStore(path))
        return opened[-1]

    yield open_one
    for each in reversed(opened):
        each.close()


@pytest.fixture
def store(open_store: Callable[[str], Store]) -> Store:
    return open_store("memories")


@pytest.fixture
def sqlite_store(db_path: Path) -> Iterator[SQLiteMemoryStore]:
    """A SQLite store alone, for what is SQLite's only: FTS5's word search (with PostgreSQL, word
    search is the vector index's; see docs/team.md)."""
    opened = SQLiteMemoryStore(db_path)
    yield opened
    opened.close()
