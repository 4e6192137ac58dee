"""Loaded sources (files, repositories) and their chunks: the SQL, and ``Sources``, the store's
repository over it. A source's memories are replaced in one transaction, so no reader ever sees a
file with some of its sections missing."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from cognitive_memory.core.memory import LOADED_TYPES, CognitiveMemory, content_key
from cognitive_memory.core.store.values import ChunkRow, SourceRecord, SourceWrite
from cognitive_memory.errors import StorageError
from cognitive_memory.storage import associations
from cognitive_memory.storage.properties import note_activity
from cognitive_memory.storage.rows import delete_memories, insert_memories, queue_vector_writes
from cognitive_memory.storage.sql import Connection, DatabaseAccess

__all__ = [
    "STRUCTURE_KINDS",
    "ChunkRow",
    "SourceRecord",
    "SourceWrite",
    "Sources",
    "chunks_of",
    "digests_of",
    "forget_source",
    "resolve_links",
    "save_digests",
    "sources_under",
    "write_source",
]

# Edges between the chunks of one source; rewritten whenever the source is synced.
STRUCTURE_KINDS = ("parent", "child", "sibling")
LINK_WEIGHT = 0.6


def chunks_of(conn: Connection, source_key: str) -> list[ChunkRow]:
    rows = conn.execute(
        "SELECT memory_id, chunk_key, content_hash, position FROM source_chunks WHERE source_key = ? "
        "ORDER BY position",
        (source_key,),
    ).fetchall()
    return [ChunkRow(*row) for row in rows]


def sources_under(conn: Connection, loader_type: str, prefix: str) -> list[SourceRecord]:
    """Sources of ``loader_type`` whose key is ``prefix`` or starts with it ('' for all)."""
    pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    rows = conn.execute(
        "SELECT key, loader_type, fingerprint, state, loaded_at FROM sources "
        f"WHERE loader_type = ? AND {conn.dialect.prefix_like('key')} ORDER BY key",
        (loader_type, pattern),
    ).fetchall()
    return [
        SourceRecord(key, kind, fingerprint, json.loads(state), datetime.fromtimestamp(at, UTC))
        for key, kind, fingerprint, state, at in rows
    ]


def write_source(conn: Connection, write: SourceWrite, at: float) -> list[str]:
    """Apply a ``SourceWrite`` (the caller has inserted ``added`` and deleted ``removed``): rewrite
    changed rows, the chunk table, structure edges and links. Returns the ids whose lexical entry
    must be rewritten."""
    conn.executemany(
        "UPDATE memories SET content = ?, hierarchy_level = ?, memory_type = ?, modified_date = ?, "
        "source_date = ?, importance_score = ?, metadata = ?, tags = ?, embedding = ?, loader_type = ?, "
        "speaker = ?, origin = ?, project = ?, content_key = ? WHERE id = ?",
        [_rewrite_row(memory) for memory in write.rewritten],
    )
    conn.execute("DELETE FROM source_chunks WHERE source_key = ?", (write.key,))
    conn.executemany(
        "INSERT INTO source_chunks (memory_id, source_key, chunk_key, content_hash, position) "
        "VALUES (?, ?, ?, ?, ?)",
        [(c.memory_id, write.key, c.chunk_key, c.content_hash, c.position) for c in write.chunks],
    )
    ids = [c.memory_id for c in write.chunks]
    _replace_structure(conn, ids, write.edges, at)
    conn.executemany("DELETE FROM source_links WHERE memory_id = ?", [(i,) for i in ids])
    conn.executemany(
        "INSERT INTO source_links (memory_id, target_key) VALUES (?, ?) ON CONFLICT DO NOTHING", write.links
    )
    conn.execute(
        "INSERT INTO sources (key, loader_type, fingerprint, state, loaded_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (key) DO UPDATE SET loader_type = excluded.loader_type, "
        "fingerprint = excluded.fingerprint, state = excluded.state, loaded_at = excluded.loaded_at",
        (write.key, write.loader_type, write.fingerprint, json.dumps(dict(write.state)), at),
    )
    return [memory.id for memory in write.rewritten]


def forget_source(conn: Connection, key: str) -> None:
    conn.execute("DELETE FROM sources WHERE key = ?", (key,))
    conn.execute("DELETE FROM source_digests WHERE source_key = ?", (key,))


def digests_of(conn: Connection, key: str) -> list[str]:
    rows = conn.execute("SELECT data FROM source_digests WHERE source_key = ? ORDER BY seq", (key,))
    return [data for (data,) in rows.fetchall()]


def save_digests(conn: Connection, key: str, items: Sequence[tuple[str, str]], replace: bool) -> None:
    """Append ``(item_key, data)`` digests after the source's stored ones (an item already stored is
    rewritten in place), or replace them all."""
    if replace:
        conn.execute("DELETE FROM source_digests WHERE source_key = ?", (key,))
    (last,) = conn.execute(
        "SELECT COALESCE(MAX(seq), -1) FROM source_digests WHERE source_key = ?", (key,)
    ).fetchone()
    conn.executemany(
        "INSERT INTO source_digests (source_key, item_key, seq, data) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (source_key, item_key) DO UPDATE SET data = excluded.data",
        [(key, item, last + 1 + n, data) for n, (item, data) in enumerate(items)],
    )


def resolve_links(conn: Connection, at: float) -> None:
    """Connect every linking chunk to the first chunk of the source it links to, both ways."""
    pairs = conn.execute(
        "SELECT l.memory_id, c.memory_id FROM source_links l JOIN source_chunks c "
        "ON c.source_key = l.target_key AND c.position = 0 WHERE l.memory_id != c.memory_id"
    ).fetchall()
    conn.executemany(
        "INSERT INTO connections (source_id, target_id, kind, weight, updated_at) "
        "VALUES (?, ?, 'link', ?, ?) ON CONFLICT DO NOTHING",
        [(a, b, LINK_WEIGHT, at) for x, y in pairs for a, b in ((x, y), (y, x))],
    )


def _replace_structure(
    conn: Connection, ids: Sequence[str], edges: Sequence[tuple[str, str, str, float]], at: float
) -> None:
    marks = ",".join("?" * len(STRUCTURE_KINDS))
    conn.executemany(
        f"DELETE FROM connections WHERE source_id = ? AND kind IN ({marks})",
        [(memory_id, *STRUCTURE_KINDS) for memory_id in ids],
    )
    conn.executemany(
        "INSERT INTO connections (source_id, target_id, kind, weight, updated_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (source_id, target_id, kind) DO UPDATE SET weight = excluded.weight, "
        "updated_at = excluded.updated_at",
        [(a, b, kind, weight, at) for a, b, kind, weight in edges],
    )


def _rewrite_row(memory: CognitiveMemory) -> tuple[Any, ...]:
    vector = memory.cognitive_embedding
    if vector is None:
        raise StorageError(f"Memory {memory.id} has no embedding; it cannot be stored.")
    return (
        memory.content,
        int(memory.hierarchy_level),
        memory.memory_type.value,
        memory.modified_date.isoformat() if memory.modified_date else None,
        memory.source_date.isoformat() if memory.source_date else None,
        memory.importance_score,
        json.dumps(dict(memory.metadata), ensure_ascii=False),
        json.dumps(list(memory.tags), ensure_ascii=False),
        vector.astype("<f4").tobytes(),
        memory.source.loader_type,
        memory.speaker,
        memory.origin,
        memory.project,
        content_key(memory.content),
        memory.id,
    )


class Sources:
    """The loaded sources of one database, with their chunks and digests."""

    def __init__(self, database: DatabaseAccess) -> None:
        self._db = database

    def write(self, writes: Sequence[SourceWrite]) -> None:
        """Apply loader syncs in one transaction: a reader sees each source before or after, never
        half-replaced. Vector writes (new and rewritten upserts, deletions) go to the outbox."""
        now = datetime.now(UTC).timestamp()
        with self._db.transaction() as conn:
            for write in writes:
                delete_memories(conn, write.removed, now)
                insert_memories(conn, write.added, now)
                rewritten = write_source(conn, write, now)
                for memory_id in rewritten:
                    associations.index_memory(conn, memory_id)
                queue_vector_writes(conn, rewritten, "upsert", now)
            resolve_links(conn, now)
            if any(write.added or write.rewritten for write in writes):
                note_activity(conn, "last_storage", now)

    def forget(self, keys: Sequence[str]) -> list[str]:
        """Delete loaded sources and all their memories; returns the memory ids removed."""
        now = datetime.now(UTC).timestamp()
        removed: list[str] = []
        with self._db.transaction() as conn:
            for key in keys:
                ids = [chunk.memory_id for chunk in chunks_of(conn, key)]
                removed += delete_memories(conn, ids, now)
                forget_source(conn, key)
        return removed

    def orphans(self) -> list[str]:
        """Ids of memories marked as loaded that no source's chunk table holds (the doctor's
        ``sources`` check), read apart from the other reads."""
        marks = ",".join("?" * len(LOADED_TYPES))
        rows = self._db.read_apart(
            lambda conn: conn.execute(
                f"SELECT id FROM memories WHERE loader_type IN ({marks}) "
                "AND id NOT IN (SELECT memory_id FROM source_chunks) ORDER BY id",
                LOADED_TYPES,
            ).fetchall()
        )
        return [str(memory_id) for (memory_id,) in rows]

    def chunks(self, key: str) -> list[ChunkRow]:
        """The chunks a source holds, in order."""
        return self._db.read(lambda conn: chunks_of(conn, key))

    def under(self, loader_type: str, prefix: str = "") -> list[SourceRecord]:
        """Loaded sources of ``loader_type`` whose key starts with ``prefix``."""
        return self._db.read(lambda conn: sources_under(conn, loader_type, prefix))

    def digests(self, key: str) -> list[str]:
        """The per-item digests a loader keeps for a source (one per commit, say), oldest first."""
        return self._db.read(lambda conn: digests_of(conn, key))

    def save_digests(self, key: str, items: Sequence[tuple[str, str]], *, replace: bool = False) -> None:
        """Append ``(item_key, data)`` digests to a source's, or replace them all, in one transaction."""
        with self._db.transaction() as conn:
            save_digests(conn, key, items, replace)
