"""Damaged rows: memories whose row cannot be read or indexed, found and set aside.

A row no command writes (an import of an older version, a hand edit, a tool writing SQLite
directly) can hold an id the vector index refuses, JSON that does not parse or an embedding of
another size. Reads leave such a row out (``rows.readable_memories``) and the index refuses its
point (``vector_store.point_problem``); ``memory_system doctor`` names it and ``doctor --repair``
moves it to the ``set_aside`` table (migration 0012), whole, never purged.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from cognitive_memory.core.store.values import DamagedRow
from cognitive_memory.index.vector_store import VectorPoint, point_problem
from cognitive_memory.storage.rows import MEMORY_COLUMNS, UNREADABLE, delete_memories, memory_from_row
from cognitive_memory.storage.sql import Connection, DatabaseAccess, column_names

__all__ = ["DamagedRow", "DamagedRows", "find_damaged", "row_problem", "set_aside", "set_aside_count"]

Read = Callable[[str, Sequence[Any]], list[Any]]
_BATCH = 1000


def row_problem(row: Sequence[Any], dimension: int | None) -> str | None:
    """What keeps a row of ``MEMORY_COLUMNS`` from being read or indexed, if anything."""
    try:
        memory = memory_from_row(row)
    except UNREADABLE as exc:
        return f"it cannot be read: {exc}"
    vector = memory.cognitive_embedding
    if vector is None:
        return "it has no embedding"
    return point_problem(VectorPoint(memory.id, vector, {}), dimension or vector.size)


def find_damaged(read: Read, dimension: int | None) -> list[DamagedRow]:
    """Every damaged memory, read ``_BATCH`` rows at a time (each ``read`` a short query)."""
    found: list[DamagedRow] = []
    last_rowid = 0
    while rows := read(
        f"SELECT {MEMORY_COLUMNS}, rowid FROM memories WHERE rowid > ? ORDER BY rowid LIMIT ?",
        (last_rowid, _BATCH),
    ):
        for row in rows:
            problem = row_problem(row, dimension)
            if problem is not None:
                found.append(DamagedRow(str(row[0]), problem))
        last_rowid = rows[-1][-1]
    return found


def set_aside(conn: Connection, damaged: Sequence[DamagedRow], now: float) -> list[str]:
    """Copy each damaged memory (every column, its links and versions) to ``set_aside``, then
    delete it as ``rows.delete_memories`` does; returns the ids moved."""
    for entry in damaged:
        cursor = conn.execute("SELECT * FROM memories WHERE id = ?", (entry.id,))
        values = cursor.fetchone()
        if values is None:
            continue
        row = dict(zip(column_names(cursor), values, strict=True))
        relations = conn.execute(
            "SELECT from_id, to_id, relation, note, created_at, session_id, weight FROM relations "
            "WHERE from_id = ? OR to_id = ?",
            (entry.id, entry.id),
        ).fetchall()
        versions = conn.execute(
            "SELECT * FROM memory_versions WHERE memory_id = ? ORDER BY version", (entry.id,)
        ).fetchall()
        conn.execute(
            "INSERT INTO set_aside (id, content, problem, set_aside_at, row, relations, versions) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                entry.id,
                _text(row.get("content")),
                entry.problem,
                now,
                _json(row),
                _json(relations),
                _json(versions),
            ),
        )
    return delete_memories(conn, [entry.id for entry in damaged], now)


def set_aside_count(read: Read) -> int:
    """How many memories ``doctor --repair`` has set aside so far."""
    return int(read("SELECT COUNT(*) FROM set_aside", ())[0][0])


def _text(value: object) -> str | None:
    return value if isinstance(value, str) or value is None else _json(value)


def _json(value: object) -> str:
    """JSON of plain values, a blob written as hex (an embedding, or a text column holding bytes)."""
    return json.dumps(
        value, ensure_ascii=False, default=lambda blob: blob.hex() if isinstance(blob, bytes) else str(blob)
    )


class DamagedRows:
    """The damaged memories of one database and the ``set_aside`` table they are moved to."""

    def __init__(self, database: DatabaseAccess, dimension: Callable[[], int | None]) -> None:
        self._db = database
        self._dimension = dimension

    def find(self, dimension: int | None = None) -> list[DamagedRow]:
        """Memories whose row cannot be read or indexed with vectors of ``dimension`` numbers (the
        recorded encoder's if not given), with what is wrong."""
        return find_damaged(self._db.rows, dimension or self._dimension())

    def set_aside(self, rows: Sequence[DamagedRow]) -> list[str]:
        """Move damaged memories to the ``set_aside`` table, in one transaction; returns their ids."""
        with self._db.transaction() as conn:
            return set_aside(conn, rows, datetime.now(UTC).timestamp())

    def set_aside_count(self) -> int:
        """How many memories ``doctor --repair`` has set aside so far."""
        return set_aside_count(self._db.rows)
