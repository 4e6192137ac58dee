"""SQLite's memory database: its transactions and reads, on two connections.

Every repository of the store (``sqlite_store.SQLiteMemoryStore``) works through one
``Database`` (the repositories see it as ``sql.DatabaseAccess``); it is the one place where
``sqlite3.Error`` becomes ``StorageError``. SQLite's alone, as are ``inspect_file`` and
``refused_write`` below.
"""

from __future__ import annotations

import itertools
import os
import shutil
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from cognitive_memory.errors import StorageError
from cognitive_memory.storage.connection import SQLiteConnection, connect
from cognitive_memory.storage.file_identity import FileIdentity

__all__ = [
    "Database",
    "FileHealth",
    "file_in_the_way",
    "inspect_file",
    "raised_by_the_database",
    "refused_write",
]

T = TypeVar("T")

Setup = Callable[[SQLiteConnection], object]


class Database:
    """One SQLite file (WAL mode, FULL sync: a commit is durable), opened once per store.

    Writes, and the reads made inside a write transaction, go through one connection under one
    lock; every other read goes through a second connection under its own lock. WAL lets that
    reader see the last commit while a write is under way, so a recall never waits for the
    bookkeeping of the one before it (access counts and co-recall links, written on a thread
    while the answer goes out) to sync its commit to disk."""

    def __init__(self, path: Path, setup: Sequence[Setup] = ()) -> None:
        """Open ``path`` (creating its directory) and run each of ``setup`` on the connection
        (migrations, backfills), in order."""
        self.path = path
        if blocker := file_in_the_way(path.parent):
            raise StorageError(
                f"Cannot open the memory database {path}: {blocker} is a file, not a directory. Point "
                "COGNITIVE_MEMORY_DATA_DIR (or COGNITIVE_MEMORY_DB_PATH) at a directory."
            )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = connect(path)
            for step in setup:
                step(self._conn)
            self._reader = connect(path)
        except (sqlite3.Error, OSError) as exc:
            unwritable = not os.access(path.parent, os.W_OK)
            if isinstance(exc, sqlite3.Error) and "readonly" in str(exc) and unwritable:
                raise StorageError(
                    f"Cannot open the memory database {path}: {path.parent} is not writable (a read-only "
                    "mount, or its permissions), and SQLite writes beside the database even to read it. "
                    "Make it writable, or copy the directory somewhere writable and point "
                    "COGNITIVE_MEMORY_DATA_DIR there."
                ) from exc
            if isinstance(exc, sqlite3.Error) and _nearly_full(path.parent):
                raise StorageError(
                    f"Cannot open the memory database {path}: the disk holding it is full ({exc}). Free "
                    "some space and try again.",
                    code="disk_full",
                ) from exc
            raise StorageError(f"Cannot open the memory database {path}: {exc}") from exc
        self._lock = threading.RLock()
        self._read_lock = threading.RLock()
        self._writing = threading.local()  # ``active`` while this thread is in a write transaction
        self._reading = threading.local()  # ``snapshot`` while this thread is in a read of its own
        self._snapshots = itertools.count(1)
        self.location = FileIdentity(path)  # checked around every write: see file_identity

    @contextmanager
    def transaction(self) -> Iterator[SQLiteConnection]:
        """One write transaction (BEGIN IMMEDIATE), rolled back if the body raises."""
        with self._lock:
            self.location.check()
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                self._writing.active = True
                try:
                    yield self._conn
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                finally:
                    self._writing.active = False
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise refused_write(self.path, exc) from exc
            self.location.check()  # deleted during the write: say so rather than acknowledge it

    def read(self, query: Callable[[SQLiteConnection], T]) -> T:
        """What ``query`` reads, in one read transaction: all it reads is one snapshot of the
        database, the last commit when it began. A read inside another joins it, and a read
        inside this thread's write transaction joins that (it sees the write's own changes)."""
        if getattr(self._writing, "active", False):
            return self._within(self._conn, self._lock, query)
        return self._within(self._reader, self._read_lock, query)

    def _within(
        self, conn: SQLiteConnection, lock: threading.RLock, query: Callable[[SQLiteConnection], T]
    ) -> T:
        with lock:
            try:
                if conn.in_transaction:
                    return query(conn)
                conn.execute("BEGIN")
                if conn is self._reader:
                    self._reading.snapshot = next(self._snapshots)
                try:
                    return query(conn)
                finally:
                    self._reading.snapshot = None
                    if conn.in_transaction:  # an error may have ended it already
                        conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise StorageError(f"The memory database {self.path} failed a read: {exc}") from exc

    def snapshot(self) -> int | None:
        """A number for the read this thread is in (``read``, on the readers' connection), which
        no other read has: what is read twice under one number is the same. None outside such a
        read, and inside a write (which sees its own changes)."""
        return None if getattr(self._writing, "active", False) else getattr(self._reading, "snapshot", None)

    def read_apart(self, query: Callable[[SQLiteConnection], T]) -> T:
        """What ``query`` reads, in one read transaction on a connection of its own, opened for
        it and closed after: a long read (a whole table into memory, on a thread) that the other
        reads never wait behind."""
        self.location.check()
        try:
            conn = connect(self.path)
            try:
                conn.execute("BEGIN")
                return query(conn)
            finally:
                conn.close()
        except sqlite3.Error as exc:
            raise StorageError(f"The memory database {self.path} failed a read: {exc}") from exc

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """The rows of one SELECT (through ``read``)."""
        return self.read(lambda conn: conn.execute(sql, params).fetchall())

    def size_bytes(self) -> int:
        """The size of the database file with its WAL and shared-memory files."""
        return sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())

    def trace(self, callback: Callable[[str], object] | None) -> None:
        """Have ``callback`` see every statement either connection runs (None: stop). Set between
        two uses of each: setting it holds the GIL and waits for the connection, whose statement
        running on another thread may be waiting for the GIL to call the old callback."""
        with self._lock, self._read_lock:
            for conn in (self._conn, self._reader):
                conn.set_trace_callback(callback)

    def close(self) -> None:
        with self._lock, self._read_lock:
            self._reader.close()
            self._conn.close()


# SQLite's primary result codes for a write the disk, its mount or another process refused.
_SQLITE_BUSY, _SQLITE_READONLY, _SQLITE_FULL = 5, 8, 13


def refused_write(path: Path, exc: sqlite3.Error) -> StorageError:
    """The store error a write transaction's failure means: a full disk, a read-only database and
    a lock held too long say what to do; nothing of the transaction was written."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if code == _SQLITE_FULL:
        return StorageError(
            f"The disk holding the memory database {path} is full ({exc}): nothing was written. Free "
            "some space and try again.",
            code="disk_full",
        )
    if code == _SQLITE_READONLY:
        return StorageError(
            f"The memory database {path} is read-only ({exc}): nothing was written. Make it and its "
            "directory writable, or point COGNITIVE_MEMORY_DATA_DIR at a writable copy.",
            code="read_only",
        )
    if code == _SQLITE_BUSY:
        return StorageError(
            f"The memory database {path} stayed locked by another process ({exc}): nothing was "
            "written. Try again once that process is done.",
            code="database_locked",
        )
    return StorageError(f"The memory database {path} refused a write: {exc}")


# Less free space than this where SQLite's "disk I/O error" at opening comes from a full disk.
_NEARLY_FULL_BYTES = 1024 * 1024


def _nearly_full(folder: Path) -> bool:
    try:
        return shutil.disk_usage(folder).free < _NEARLY_FULL_BYTES
    except OSError:
        return False


def file_in_the_way(folder: Path) -> Path | None:
    """The nearest of ``folder`` and its parents that exists, when it is not a directory."""
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            return None if candidate.is_dir() else candidate
    return None


class FileHealth(NamedTuple):
    """What ``inspect_file`` reads of a database file: ``integrity_check``'s lines (``["ok"]``
    when whole), its journal mode, and the migrations it records."""

    integrity: list[str]
    journal: str
    migrations: set[str]


def inspect_file(path: Path) -> FileHealth:
    """Read-only, before anything opens the store: integrity, journal mode and migrations of the
    database at ``path``. ``StorageError`` with code ``database_unreadable`` when it cannot be
    read (locked, no rights), ``database_damaged`` when it is not a database any more; its message
    is SQLite's."""
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as conn:
            integrity = [str(row[0]) for row in conn.execute("PRAGMA integrity_check")]
            journal = str(conn.execute("PRAGMA journal_mode").fetchone()[0])
            table = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
            if conn.execute(table).fetchone() is None:
                return FileHealth(integrity, journal, set())
            recorded = {str(row[0]) for row in conn.execute("SELECT name FROM schema_migrations")}
            return FileHealth(integrity, journal, recorded)
    except sqlite3.OperationalError as exc:
        raise StorageError(str(exc), code="database_unreadable") from exc
    except sqlite3.DatabaseError as exc:
        raise StorageError(str(exc), code="database_damaged") from exc


def raised_by_the_database(exc: BaseException) -> bool:
    """Whether ``exc`` comes from the store of record (SQLite's or psycopg's own error is its
    cause), not the index. psycopg is known by its module: it is not imported on SQLite's path."""
    cause = exc.__cause__
    return isinstance(cause, sqlite3.Error) or type(cause).__module__.partition(".")[0] == "psycopg"
