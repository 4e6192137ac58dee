"""Fixtures of the store of record's tests: a database path and a store in ``tmp_path``, each
test run on both stores of record: SQLite, and PostgreSQL on a fresh database of the test
process's throwaway server (tests/fixtures/postgres.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cognitive_memory.storage import SQLiteMemoryStore
from cognitive_memory.storage.postgres import PostgresMemoryStore

# The stores of record the suite runs on; a test file about one of them overrides ``store``.
STORES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "db" / "memories.db"


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, db_path: Path) -> Iterator[SQLiteMemoryStore | PostgresMemoryStore]:
    if request.param == "postgres":
        opened: SQLiteMemoryStore | PostgresMemoryStore = PostgresMemoryStore(
            request.getfixturevalue("postgres_url"), db_path
        )
    else:
        opened = SQLiteMemoryStore(db_path)
    yield opened
    opened.close()
