"""Rows no command writes, put into a store with sqlite3 directly: what a store must survive."""

from __future__ import annotations

import dataclasses
import sqlite3
import uuid
from collections.abc import Mapping
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cognitive_memory.core.memory import CognitiveMemory
from cognitive_memory.storage.connection import SQLiteConnection
from cognitive_memory.storage.rows import insert_memories

# A damage: the id the row gets and the raw values some of its columns get.
DAMAGES: Mapping[str, tuple[str, Mapping[str, Any]]] = {
    "id not a UUID": ("my-note-1", {}),
    "id a UUID in capitals": (str(uuid.UUID(int=27)).upper(), {}),
    "embedding of 1533 bytes": (str(uuid.UUID(int=28)), {"embedding": b"\x01" * 1533}),
    "embedding of 383 numbers": (str(uuid.UUID(int=29)), {"embedding": b"\x00" * 4 * 383}),
    "metadata not JSON": (str(uuid.UUID(int=30)), {"metadata": "{oops"}),
    "tags not a list": (str(uuid.UUID(int=31)), {"tags": "7"}),
    "created_date not a date": (str(uuid.UUID(int=32)), {"created_date": "last tuesday"}),
}

BAD_TEXT = "My own note about the flaky build server, written by hand and imported."


def write_bad_row(database: Path, like: CognitiveMemory, damage: str) -> str:
    """Insert a copy of ``like`` with the damage named (a key of ``DAMAGES``); returns its id."""
    memory_id, columns = DAMAGES[damage]
    write_row(database, dataclasses.replace(like, id=memory_id, content=BAD_TEXT, session_id=None), columns)
    return memory_id


def write_row(database: Path, memory: CognitiveMemory, columns: Mapping[str, Any] | None = None) -> None:
    """Insert ``memory`` as an import writes it (row, words, links in time, queued vector write),
    then give ``columns`` their raw values, with sqlite3 directly (a connection that names its
    dialect, as the repositories' SQL asks)."""
    memory_id = memory.id
    with closing(sqlite3.connect(database, isolation_level=None, factory=SQLiteConnection)) as conn:
        conn.execute("BEGIN IMMEDIATE")
        insert_memories(conn, [memory], datetime.now(UTC).timestamp())
        for column, value in (columns or {}).items():
            conn.execute(f"UPDATE memories SET {column} = ? WHERE id = ?", (value, memory_id))
        conn.execute("COMMIT")
