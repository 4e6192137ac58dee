"""Memory rows: the columns of a whole memory, and the SQL that inserts and deletes memories
inside the store's transactions."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from cognitive_memory.core.memory import CognitiveMemory, HierarchyLevel, MemoryType, SourceKind, content_key
from cognitive_memory.errors import StorageError
from cognitive_memory.storage import associations, outbox, words
from cognitive_memory.storage.sql import Connection

__all__ = [
    "MEMORY_COLUMNS",
    "UNREADABLE",
    "delete_lexical_entries",
    "delete_memories",
    "fill_content_keys",
    "insert_memories",
    "memory_from_row",
    "memory_row",
    "queue_vector_writes",
    "readable_memories",
]

logger = logging.getLogger(__name__)

MEMORY_COLUMNS = (
    "id, content, hierarchy_level, memory_type, created_date, timestamp, modified_date, source_date, "
    "last_accessed, access_count, importance_score, metadata, tags, embedding, session_id, project, "
    "loader_type, speaker, origin, memory_key"
)


# The columns ``strength`` and ``dimensions`` of the first schema are written (NOT NULL) but no
# longer read: recall computes strength from uses (core/strength.py).
UNUSED_STRENGTH = 1.0


def fill_content_keys(conn: sqlite3.Connection) -> None:
    """Give memories stored before duplicate detection their content key (once, in batches): a
    step of SQLite's opening (``database.Database``'s setup), on its connection."""
    while rows := conn.execute(
        "SELECT id, content FROM memories WHERE content_key IS NULL LIMIT 1000"
    ).fetchall():
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(
                "UPDATE memories SET content_key = ? WHERE id = ?",
                [(content_key(text), i) for i, text in rows],
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")


def insert_memories(conn: Connection, memories: Sequence[CognitiveMemory], now: float) -> None:
    """Insert rows, link each to its predecessors in its session, index words, queue vectors."""
    conn.executemany(
        f"INSERT INTO memories ({MEMORY_COLUMNS}, content_key, strength, dimensions) "
        f"VALUES ({', '.join('?' * 21)}, {UNUSED_STRENGTH}, '{{}}')",
        [memory_row(memory) for memory in memories],
    )
    for memory in memories:
        stamp = memory.timestamp.timestamp()
        linked = associations.link_in_time(conn, memory.id, memory.session_id, stamp)
        for memory_id in (memory.id, *linked):
            associations.index_memory(conn, memory_id)
    queue_vector_writes(conn, [memory.id for memory in memories], "upsert", now)


def delete_memories(conn: Connection, ids: Sequence[str], now: float) -> list[str]:
    """Delete rows, lexical entries and links, queue vector deletions, re-index neighbours in time."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    found = conn.execute(f"SELECT id, rowid FROM memories WHERE id IN ({marks})", ids).fetchall()
    existing = [memory_id for memory_id, _ in found]
    if not existing:
        return []
    marks = ",".join("?" * len(existing))
    touched = {
        row[0]
        for row in conn.execute(
            f"SELECT target_id FROM connections WHERE source_id IN ({marks}) AND kind = 'temporal'",
            existing,
        )
    } - set(existing)
    delete_lexical_entries(conn, [rowid for _, rowid in found])
    words.forget_terms(conn, [rowid for _, rowid in found])
    conn.execute(f"DELETE FROM memories WHERE id IN ({marks})", existing)
    queue_vector_writes(conn, existing, "delete", now)
    for memory_id in sorted(touched):
        associations.index_memory(conn, memory_id)
    return existing


def delete_lexical_entries(conn: Connection, rowids: Sequence[int]) -> None:
    """Delete the lexical index's (FTS5's) entries of the memories of ``rowids``. SQLite's
    full-text index alone; on PostgreSQL, their lengths (``associations.write_lexical_entry``)."""
    table, key = ("memory_lengths", "memory_rowid") if conn.dialect.postgres else ("memory_fts", "rowid")
    conn.executemany(f"DELETE FROM {table} WHERE {key} = ?", [(rowid,) for rowid in rowids])


def queue_vector_writes(conn: Connection, ids: Sequence[str], operation: str, at: float) -> None:
    """Record vector writes the index has yet to confirm (replayed at start-up): see ``outbox.queue``."""
    outbox.queue(conn, [(memory_id, operation, at) for memory_id in ids])


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def memory_row(memory: CognitiveMemory) -> tuple[Any, ...]:
    if memory.cognitive_embedding is None:
        raise StorageError(f"Memory {memory.id} has no embedding; it cannot be stored.")
    return (
        memory.id,
        memory.content,
        int(memory.hierarchy_level),
        memory.memory_type.value,
        memory.created_date.isoformat(),
        memory.timestamp.timestamp(),
        _iso(memory.modified_date),
        _iso(memory.source_date),
        memory.last_accessed.timestamp() if memory.last_accessed else None,
        memory.access_count,
        memory.importance_score,
        json.dumps(dict(memory.metadata), ensure_ascii=False),
        json.dumps(list(memory.tags), ensure_ascii=False),
        memory.cognitive_embedding.astype("<f4").tobytes(),
        memory.session_id,
        memory.project,
        memory.source.loader_type,
        memory.speaker,
        memory.origin,
        memory.key,
        content_key(memory.content),
    )


# What decoding a row no command wrote can raise (a column of another type or shape).
UNREADABLE = (ValueError, TypeError, OverflowError, OSError)


def readable_memories(rows: Iterable[Sequence[Any]], told: set[str]) -> list[CognitiveMemory]:
    """The memories of ``rows``, leaving out each row that cannot be read (logged once: ``told``
    holds the ids already logged): one damaged row is a problem of that memory, never of the
    read that met it."""
    memories = []
    for row in rows:
        try:
            memories.append(memory_from_row(row))
        except UNREADABLE as exc:
            if row[0] not in told:
                told.add(row[0])
                logger.warning(
                    "Memory %r cannot be read (%s) and is left out; `memory_system doctor` names it and "
                    "`memory_system doctor --repair` sets it aside.",
                    row[0],
                    exc,
                )
    return memories


def _parsed(text: str, kind: type, column: str) -> Any:
    value = json.loads(text)
    if not isinstance(value, kind):
        raise ValueError(f"{column} holds JSON that is not a{'n object' if kind is dict else ' list'}")
    return value


def _vector(blob: bytes) -> np.ndarray[Any, np.dtype[np.float32]]:
    if not isinstance(blob, bytes) or len(blob) % 4:
        size = f"{len(blob)} bytes" if isinstance(blob, bytes) else type(blob).__name__
        raise ValueError(f"the embedding is not a list of 32-bit floats ({size})")
    return np.frombuffer(blob, dtype="<f4").astype(np.float32)


def memory_from_row(row: Sequence[Any]) -> CognitiveMemory:
    """The memory of one row of ``MEMORY_COLUMNS``; raises one of ``UNREADABLE`` for a row that
    no command writes (a column that does not parse, or parses to the wrong shape)."""
    return CognitiveMemory(
        id=row[0],
        content=row[1],
        hierarchy_level=HierarchyLevel(row[2]),
        memory_type=MemoryType(row[3]),
        created_date=datetime.fromisoformat(row[4]),
        timestamp=datetime.fromtimestamp(row[5], UTC),
        modified_date=datetime.fromisoformat(row[6]) if row[6] else None,
        source_date=datetime.fromisoformat(row[7]) if row[7] else None,
        last_accessed=datetime.fromtimestamp(row[8], UTC) if row[8] is not None else None,
        access_count=row[9],
        importance_score=row[10],
        metadata=_parsed(row[11], dict, "metadata"),
        tags=tuple(str(tag) for tag in _parsed(row[12], list, "tags")),
        cognitive_embedding=_vector(row[13]),
        session_id=row[14],
        project=row[15],
        source=SourceKind.of(row[16]),
        speaker=row[17],
        origin=row[18],
        key=row[19],
    )
