"""The trash: forgotten and pruned memories kept whole, restorable until purged.

Moving a memory to the trash and restoring it each happen inside one of SQLiteMemoryStore's
transactions, so a crash leaves the memory either where it was or where it went, never half of it.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from cognitive_memory.core.pruning import PruneCandidate, PruneCriteria
from cognitive_memory.storage import associations
from cognitive_memory.storage.pruning import prune_candidates
from cognitive_memory.storage.rows import delete_memories, queue_vector_writes

__all__ = [
    "TrashBin",
    "TrashRow",
    "move_to_trash",
    "purge",
    "restore",
    "secret",
    "trash_rows",
    "trashed",
]

# Checks a prune's ids against its confirm token (secret, ids, now); raises to refuse them.
Confirm = Callable[[str, Sequence[str], float], None]

_RELATION_COLUMNS = ("from_id", "to_id", "relation", "note", "created_at", "session_id")
_VERSION_COLUMNS = (
    "memory_id, version, content, hierarchy_level, memory_type, importance_score, tags, metadata, "
    "project, replaced_at, replaced_by_session"
)
_CONNECTION_COLUMNS = ("source_id", "target_id", "kind", "weight", "updated_at")


@dataclass(frozen=True, slots=True)
class TrashRow:
    """What the trash shows of a memory: when, why and by which session it went there (and, when
    consolidated, the id of the memory it was merged into)."""

    id: str
    content: str
    project: str
    trashed_at: float
    reason: str
    trashed_by: str | None
    consolidated_into: str | None = None


def move_to_trash(
    conn: sqlite3.Connection, ids: Sequence[str], reason: str, session_id: str | None, now: float
) -> list[str]:
    """Copy each memory (every column, its links, versions and connections) into the trash, then
    delete it as ``rows.delete_memories`` does (lexical entry, links, queued vector deletion).
    Returns the ids that existed."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    cursor = conn.execute(f"SELECT * FROM memories WHERE id IN ({marks})", list(ids))
    names = [column[0] for column in cursor.description]
    found = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
    conn.executemany(
        "INSERT OR REPLACE INTO trash (id, content, project, trashed_at, reason, trashed_by, row, "
        "embedding, relations, versions, connections) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [_trash_entry(conn, row, reason, session_id, now) for row in found],
    )
    return delete_memories(conn, [row["id"] for row in found], now)


def _trash_entry(
    conn: sqlite3.Connection, row: dict[str, Any], reason: str, session_id: str | None, now: float
) -> tuple[Any, ...]:
    memory_id = row["id"]
    fields = {name: value for name, value in row.items() if name != "embedding"}
    relations = conn.execute(
        f"SELECT {', '.join(_RELATION_COLUMNS)} FROM relations WHERE from_id = ? OR to_id = ?",
        (memory_id, memory_id),
    ).fetchall()
    versions = conn.execute(
        f"SELECT {_VERSION_COLUMNS} FROM memory_versions WHERE memory_id = ? ORDER BY version", (memory_id,)
    ).fetchall()
    connections = conn.execute(
        f"SELECT {', '.join(_CONNECTION_COLUMNS)} FROM connections WHERE source_id = ? OR target_id = ?",
        (memory_id, memory_id),
    ).fetchall()
    return (
        memory_id,
        row["content"],
        row["project"],
        now,
        reason,
        session_id,
        json.dumps(fields, ensure_ascii=False),
        row["embedding"],
        json.dumps(relations, ensure_ascii=False),
        json.dumps(versions, ensure_ascii=False),
        json.dumps(connections),
    )


def restore(conn: sqlite3.Connection, ids: Sequence[str], now: float) -> list[str]:
    """Put trashed memories back with their ids, versions, and the links and connections whose
    other end exists; re-index their words and queue their vectors. Returns the ids restored
    (ids not in the trash, or whose id is in use again, are skipped)."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    entries = conn.execute(
        f"SELECT id, row, embedding, relations, versions, connections FROM trash WHERE id IN ({marks})",
        list(ids),
    ).fetchall()
    in_use = _existing(conn, [entry[0] for entry in entries])
    entries = [entry for entry in entries if entry[0] not in in_use]
    columns = {info[1] for info in conn.execute("PRAGMA table_info(memories)")}
    for _, row, embedding, _, versions, _ in entries:
        fields = {name: value for name, value in json.loads(row).items() if name in columns}
        fields["embedding"] = embedding
        conn.execute(
            f"INSERT INTO memories ({', '.join(fields)}) VALUES ({', '.join('?' * len(fields))})",
            list(fields.values()),
        )
        conn.executemany(
            f"INSERT OR IGNORE INTO memory_versions ({_VERSION_COLUMNS}) VALUES ({', '.join('?' * 11)})",
            json.loads(versions),
        )
    restored = [entry[0] for entry in entries]
    _relink(conn, [json.loads(entry[3]) for entry in entries], "relations", _RELATION_COLUMNS)
    _relink(conn, [json.loads(entry[5]) for entry in entries], "connections", _CONNECTION_COLUMNS)
    _reindex(conn, restored)
    queue_vector_writes(conn, restored, "upsert", now)
    conn.executemany("DELETE FROM trash WHERE id = ?", [(memory_id,) for memory_id in restored])
    return restored


def _existing(conn: sqlite3.Connection, ids: Sequence[str]) -> set[str]:
    if not ids:
        return set()
    marks = ",".join("?" * len(ids))
    return {row[0] for row in conn.execute(f"SELECT id FROM memories WHERE id IN ({marks})", list(ids))}


def _relink(
    conn: sqlite3.Connection, groups: Sequence[list[list[Any]]], table: str, columns: Sequence[str]
) -> None:
    """Insert the saved rows of ``table`` whose two ends (its first two columns) exist now."""
    rows = [tuple(row) for group in groups for row in group]
    present = _existing(conn, list({end for row in rows for end in row[:2]}))
    conn.executemany(
        f"INSERT OR IGNORE INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
        [row for row in rows if row[0] in present and row[1] in present],
    )


def _reindex(conn: sqlite3.Connection, ids: Sequence[str]) -> None:
    """Write the lexical entries of restored memories and of their neighbours in time."""
    if not ids:
        return
    marks = ",".join("?" * len(ids))
    neighbours = {
        row[0]
        for row in conn.execute(
            f"SELECT target_id FROM connections WHERE source_id IN ({marks}) AND kind = 'temporal'", list(ids)
        )
    }
    for memory_id in sorted(set(ids) | neighbours):
        associations.index_memory(conn, memory_id)


def trash_rows(conn: sqlite3.Connection, limit: int) -> tuple[list[TrashRow], int]:
    """The most recently trashed memories first, at most ``limit``, and how many the trash holds."""
    rows = conn.execute(
        "SELECT id, content, project, trashed_at, reason, trashed_by, consolidated_into FROM trash "
        "ORDER BY trashed_at DESC, id LIMIT ?",
        (limit,),
    ).fetchall()
    total = conn.execute("SELECT COUNT(*) FROM trash").fetchone()[0]
    return [TrashRow(*row) for row in rows], int(total)


def trashed(conn: sqlite3.Connection, ids: Sequence[str]) -> list[TrashRow]:
    """The trash entries of these ids (ids not in the trash are skipped)."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        f"SELECT id, content, project, trashed_at, reason, trashed_by, consolidated_into FROM trash "
        f"WHERE id IN ({marks})",
        list(ids),
    ).fetchall()
    return [TrashRow(*row) for row in rows]


def purge(conn: sqlite3.Connection, before: float | None) -> int:
    """Delete for good what was trashed before ``before`` (everything when None); returns how many."""
    if before is None:
        return conn.execute("DELETE FROM trash").rowcount
    return conn.execute("DELETE FROM trash WHERE trashed_at < ?", (before,)).rowcount


def secret(conn: sqlite3.Connection, key: str) -> str:
    """A random secret of this data directory, kept in store_meta under ``key`` (made once)."""
    conn.execute("INSERT OR IGNORE INTO store_meta (key, value) VALUES (?, ?)", (key, secrets.token_hex(32)))
    return str(conn.execute("SELECT value FROM store_meta WHERE key = ?", (key,)).fetchone()[0])


Transaction = Callable[[], AbstractContextManager[sqlite3.Connection]]


class TrashBin:
    """The trash of one SQLiteMemoryStore: each call is one of its transactions."""

    def __init__(self, transaction: Transaction) -> None:
        self._transaction = transaction

    def move(self, ids: Sequence[str], reason: str, session_id: str | None) -> list[str]:
        """Move memories to the trash (see ``move_to_trash``); returns the ids that existed."""
        with self._transaction() as conn:
            return move_to_trash(conn, ids, reason, session_id, time.time())

    def restore(self, ids: Sequence[str]) -> list[str]:
        """Put trashed memories back (see ``restore``); returns the ids restored."""
        with self._transaction() as conn:
            return restore(conn, ids, time.time())

    def entries(self, limit: int) -> tuple[list[TrashRow], int]:
        """The latest trashed first, at most ``limit``, and how many the trash holds."""
        with self._transaction() as conn:
            return trash_rows(conn, limit)

    def find(self, ids: Sequence[str]) -> list[TrashRow]:
        """The trash entries of these ids."""
        with self._transaction() as conn:
            return trashed(conn, ids)

    def purge(self, before: float | None) -> int:
        """Delete for good what was trashed before ``before`` (all when None); returns how many."""
        with self._transaction() as conn:
            return purge(conn, before)

    def prune_plan(
        self, criteria: PruneCriteria, now: float, spared_loaders: Sequence[str], limit: int
    ) -> tuple[list[PruneCandidate], int, str]:
        """What a prune would take (see ``pruning.prune_candidates``), with the token secret."""
        with self._transaction() as conn:
            return (
                *prune_candidates(conn, criteria, now, spared_loaders, limit),
                secret(conn, "prune_secret"),
            )

    def prune(
        self,
        criteria: PruneCriteria,
        spared_loaders: Sequence[str],
        limit: int,
        confirm: Confirm,
        session: str | None,
    ) -> list[str]:
        """Select again, let ``confirm`` refuse a set other than the dry run's, and move it to the
        trash, all in one transaction (nothing can match or stop matching in between)."""
        now = time.time()
        with self._transaction() as conn:
            found, _ = prune_candidates(conn, criteria, now, spared_loaders, limit)
            ids = [candidate.id for candidate in found]
            confirm(secret(conn, "prune_secret"), ids, now)
            return move_to_trash(conn, ids, "pruned", session, now)
