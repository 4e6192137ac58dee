"""Opening SQLite's memory database: one connection with the pragmas every process uses, which
says it speaks SQLite's dialect (``storage/sql.py``'s ``Connection``). SQLite's alone."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from cognitive_memory.storage.dialect import SQLITE, Dialect

__all__ = ["BUSY_SECONDS", "SQLiteConnection", "connect"]

# How long a statement waits for another process's lock before it gives up.
BUSY_SECONDS = 30.0


class SQLiteConnection(sqlite3.Connection):
    """A ``sqlite3`` connection that names its dialect, as the repositories' ``Connection`` does."""

    dialect: Dialect = SQLITE


def connect(path: Path) -> SQLiteConnection:
    """A connection in autocommit mode, WAL journal, full sync and foreign keys on."""
    conn = sqlite3.connect(
        path, isolation_level=None, check_same_thread=False, timeout=BUSY_SECONDS, factory=SQLiteConnection
    )
    _use_wal(conn)
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


def _use_wal(conn: sqlite3.Connection) -> None:
    """Switch to the WAL journal. While another process is creating the same new database,
    SQLite answers this pragma "database is locked" at once, without the busy wait other
    statements get (two `load`s started together on a new data directory hit it), so it is tried
    again every 20 ms for up to BUSY_SECONDS."""
    deadline = time.monotonic() + BUSY_SECONDS
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.02)
