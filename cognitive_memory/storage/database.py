"""The memory database: one connection, one lock, its transactions and reads.

Every repository of the store (``sqlite_store.SQLiteMemoryStore``) works through one
``Database``; it is the one place where ``sqlite3.Error`` becomes ``StorageError``.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from cognitive_memory.errors import StorageError
from cognitive_memory.storage.connection import connect
from cognitive_memory.storage.file_identity import FileIdentity

__all__ = ["Database"]

T = TypeVar("T")

Setup = Callable[[sqlite3.Connection], object]


class Database:
    """One SQLite file (WAL mode, FULL sync: a commit is durable), opened once per store."""

    def __init__(self, path: Path, setup: Sequence[Setup] = ()) -> None:
        """Open ``path`` (creating its directory) and run each of ``setup`` on the connection
        (migrations, backfills), in order."""
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = connect(path)
            for step in setup:
                step(self._conn)
        except (sqlite3.Error, OSError) as exc:
            raise StorageError(f"Cannot open the memory database {path}: {exc}") from exc
        self._lock = threading.RLock()
        self.location = FileIdentity(path)  # checked around every write: see file_identity

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE), rolled back if the body raises."""
        with self._lock:
            self.location.check()
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self._conn
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise StorageError(f"The memory database {self.path} refused a write: {exc}") from exc
            self.location.check()  # deleted during the write: say so rather than acknowledge it

    def read(self, query: Callable[[sqlite3.Connection], T]) -> T:
        """What ``query`` reads from the connection, under the lock, in one read transaction: all
        it reads is one snapshot of the database. A read inside another (or inside a write
        transaction) joins it."""
        with self._lock:
            try:
                if self._conn.in_transaction:
                    return query(self._conn)
                self._conn.execute("BEGIN")
                try:
                    return query(self._conn)
                finally:
                    if self._conn.in_transaction:  # an error may have ended it already
                        self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise StorageError(f"The memory database {self.path} failed a read: {exc}") from exc

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """The rows of one SELECT (through ``read``)."""
        return self.read(lambda conn: conn.execute(sql, params).fetchall())

    def size_bytes(self) -> int:
        """The size of the database file with its WAL and shared-memory files."""
        return sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())

    def close(self) -> None:
        with self._lock:
            self._conn.close()
