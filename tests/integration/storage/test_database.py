"""The memory database: WAL mode, migrations, and errors as StorageError with their message."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path

import pytest

from cognitive_memory.errors import StorageError
from cognitive_memory.storage import SQLiteMemoryStore
from cognitive_memory.storage.database import Database
from cognitive_memory.storage.migrations import MIGRATIONS, apply_migrations
from tests.integration.storage.stored import stored_memory, table_rows


@pytest.fixture
def store(db_path: Path) -> Iterator[SQLiteMemoryStore]:
    """SQLite's alone: this file is about its Database (test_postgres_database.py, PostgreSQL's)."""
    opened = SQLiteMemoryStore(db_path)
    yield opened
    opened.close()


def test_the_database_runs_in_wal_mode(store: SQLiteMemoryStore, db_path: Path) -> None:
    assert table_rows(db_path, "PRAGMA journal_mode") == [("wal",)]


def test_every_migration_is_recorded_by_name(store: SQLiteMemoryStore, db_path: Path) -> None:
    recorded = table_rows(db_path, "SELECT name FROM schema_migrations ORDER BY name")

    assert [name for (name,) in recorded] == [name for name, _ in MIGRATIONS]


def test_reopening_applies_no_migration_twice(store: SQLiteMemoryStore, db_path: Path) -> None:
    store.memories.add([stored_memory("kept")])
    before = table_rows(db_path, "SELECT name, applied_at FROM schema_migrations")
    store.close()

    SQLiteMemoryStore(db_path).close()
    with closing(sqlite3.connect(db_path)) as conn:
        assert apply_migrations(conn) == []

    assert table_rows(db_path, "SELECT name, applied_at FROM schema_migrations") == before
    assert table_rows(db_path, "SELECT id FROM memories") == [("kept",)]


def test_a_failed_read_is_a_storage_error_naming_the_database(db_path: Path) -> None:
    database = Database(db_path)
    try:
        with pytest.raises(StorageError, match=r"memories\.db failed a read: no such table: nowhere"):
            database.rows("SELECT * FROM nowhere")
    finally:
        database.close()


def test_a_refused_write_rolls_back_and_is_a_storage_error(db_path: Path) -> None:
    database = Database(db_path, (lambda conn: conn.execute("CREATE TABLE kept (id TEXT PRIMARY KEY)"),))
    try:
        refused = pytest.raises(StorageError, match=r"memories\.db refused a write: UNIQUE constraint failed")
        with refused, database.transaction() as conn:
            conn.execute("INSERT INTO kept VALUES ('a')")
            conn.execute("INSERT INTO kept VALUES ('a')")
        assert database.rows("SELECT count(*) FROM kept") == [(0,)]
    finally:
        database.close()


def test_a_database_that_cannot_be_opened_says_which(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")

    with pytest.raises(StorageError, match=r"Cannot open the memory database .*file/memories\.db"):
        Database(tmp_path / "file" / "memories.db")


def test_a_read_is_one_snapshot_that_reads_inside_it_join(store: SQLiteMemoryStore, db_path: Path) -> None:
    store.memories.add([stored_memory("first")])

    def counted_twice(conn: sqlite3.Connection) -> tuple[int, int]:
        (before,) = conn.execute("SELECT count(*) FROM memories").fetchone()
        with closing(sqlite3.connect(db_path)) as other:  # another process's write meanwhile
            other.execute("DELETE FROM memories")
            other.commit()
        (after,) = store.database.read(
            lambda inner: inner.execute("SELECT count(*) FROM memories").fetchone()
        )
        return before, after

    assert store.database.read(counted_twice) == (1, 1)  # the nested read saw the same snapshot
    assert store.database.rows("SELECT count(*) FROM memories") == [(0,)]  # a new read sees the write
    assert store.database.read(lambda conn: conn.in_transaction)
    assert not store.database._reader.in_transaction  # ended with the read


def test_a_read_does_not_wait_for_another_threads_write(store: SQLiteMemoryStore) -> None:
    """A recall reads while the bookkeeping of the one before it writes (and syncs) on its thread:
    it sees the last commit at once instead of waiting for the write to end."""
    store.memories.add([stored_memory("first")])
    writing, release = threading.Event(), threading.Event()

    def write() -> None:
        with store.database.transaction() as conn:
            conn.execute("DELETE FROM memories")
            writing.set()
            release.wait(10)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert writing.wait(10)
        reader = ThreadPoolExecutor(1)
        seen = reader.submit(store.database.rows, "SELECT count(*) FROM memories")
        assert seen.result(timeout=5) == [(1,)]  # the last commit, not the write under way
        reader.shutdown()
    finally:
        release.set()
        writer.join()
    assert store.database.rows("SELECT count(*) FROM memories") == [(0,)]


def test_a_read_inside_a_write_sees_the_write(store: SQLiteMemoryStore) -> None:
    store.memories.add([stored_memory("first")])

    with store.database.transaction() as conn:
        conn.execute("DELETE FROM memories")
        assert store.database.rows("SELECT count(*) FROM memories") == [(0,)]
