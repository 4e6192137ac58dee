"""Updating a memory in place and keeping its earlier state as a version: the SQL, and
``Versions``, the store's repository of those versions."""

from __future__ import annotations

import json
from collections.abc import Sequence

from cognitive_memory.core.memory import CognitiveMemory, content_key
from cognitive_memory.errors import EditConflictError, NotFoundError, StorageError
from cognitive_memory.storage import associations
from cognitive_memory.storage.browse import VersionRow, versions_of
from cognitive_memory.storage.rows import MEMORY_COLUMNS, memory_from_row, queue_vector_writes
from cognitive_memory.storage.sql import Connection, DatabaseAccess

__all__ = ["VersionHistory", "check_unchanged", "rewrite_memory"]


def check_unchanged(conn: Connection, previous: CognitiveMemory) -> None:
    """Refuse (``EditConflictError``) when the stored memory is no longer ``previous``: inside the
    write's transaction, so a change made between the caller's read and this write is caught."""
    row = conn.execute(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?", (previous.id,)).fetchone()
    if row is None:
        raise NotFoundError(f"Memory {previous.id} was forgotten while it was being changed.")
    if memory_from_row(row).revision != previous.revision:
        raise EditConflictError(
            f"Memory {previous.id} changed while it was being changed; read it again and redo the edit."
        )


def rewrite_memory(
    conn: Connection,
    memory: CognitiveMemory,
    previous: CognitiveMemory,
    session_id: str | None,
    at: float,
) -> int:
    """Keep ``previous`` as the next version, write ``memory`` over it, re-index its words (and its
    neighbours' in time, whose context holds its text) and queue its vector. Returns the version
    number given to ``previous``."""
    vector = memory.cognitive_embedding
    if vector is None:
        raise StorageError(f"Memory {memory.id} has no embedding; it cannot be stored.")
    (last,) = conn.execute(
        "SELECT coalesce(max(version), 0) FROM memory_versions WHERE memory_id = ?", (memory.id,)
    ).fetchone()
    conn.execute(
        "INSERT INTO memory_versions (memory_id, version, content, hierarchy_level, memory_type, "
        "importance_score, tags, metadata, project, replaced_at, replaced_by_session) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            previous.id,
            last + 1,
            previous.content,
            int(previous.hierarchy_level),
            previous.memory_type.value,
            previous.importance_score,
            json.dumps(list(previous.tags), ensure_ascii=False),
            json.dumps(previous.shown_metadata, ensure_ascii=False),
            previous.project,
            at,
            session_id,
        ),
    )
    conn.execute(
        "UPDATE memories SET content = ?, hierarchy_level = ?, memory_type = ?, importance_score = ?, "
        "tags = ?, metadata = ?, embedding = ?, content_key = ?, modified_date = ? WHERE id = ?",
        (
            memory.content,
            int(memory.hierarchy_level),
            memory.memory_type.value,
            memory.importance_score,
            json.dumps(list(memory.tags), ensure_ascii=False),
            json.dumps(dict(memory.metadata), ensure_ascii=False),
            vector.astype("<f4").tobytes(),
            content_key(memory.content),
            memory.modified_date.isoformat() if memory.modified_date else None,
            memory.id,
        ),
    )
    if memory.content != previous.content:
        neighbours = conn.execute(
            "SELECT target_id FROM connections WHERE source_id = ? AND kind = 'temporal'", (memory.id,)
        ).fetchall()
        for memory_id in (memory.id, *(row[0] for row in neighbours)):
            associations.index_memory(conn, memory_id)
    queue_vector_writes(conn, [memory.id], "upsert", at)
    return int(last) + 1


class VersionHistory:
    """The earlier versions of memories in one database (``Memories.rewrite`` writes them)."""

    def __init__(self, database: DatabaseAccess) -> None:
        self._db = database

    def of(self, ids: Sequence[str]) -> dict[str, list[VersionRow]]:
        """The earlier versions of each of ``ids`` that was updated, oldest first."""
        return self._db.read(lambda conn: versions_of(conn, ids))
