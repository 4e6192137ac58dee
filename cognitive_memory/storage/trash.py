"""The trash: forgotten and pruned memories kept whole, restorable until purged.

Moving a memory to the trash and restoring it each happen inside one of the store's
transactions, so a crash leaves the memory either where it was or where it went, never half of it.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Sequence
from typing import Any

from cognitive_memory.core.pruning import TOKEN_SECONDS, PruneCandidate, PruneCriteria
from cognitive_memory.core.store.aggregates import Confirm
from cognitive_memory.core.store.values import TrashRow
from cognitive_memory.storage.identifiers import ids_starting_with
from cognitive_memory.storage.pruning import mark_token_used, prune_candidates, used_tokens
from cognitive_memory.storage.rows import delete_memories
from cognitive_memory.storage.sql import Connection, Transaction, column_names
from cognitive_memory.storage.trash_restore import (
    CONNECTION_COLUMNS,
    RELATION_COLUMNS,
    VERSION_COLUMNS,
    Restored,
    SkippedLink,
    restore,
)

__all__ = [
    "Restored",
    "SkippedLink",
    "TrashBin",
    "TrashRow",
    "move_to_trash",
    "purge",
    "restore",
    "secret",
    "trash_rows",
    "trashed",
]


def move_to_trash(
    conn: Connection, ids: Sequence[str], reason: str, session_id: str | None, now: float
) -> list[str]:
    """Copy each memory (every column, its links, versions and connections) into a new trash entry
    (an earlier entry of the same id stays), then delete it as ``rows.delete_memories`` does
    (lexical entry, links, queued vector deletion). Returns the ids that existed."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    cursor = conn.execute(f"SELECT * FROM memories WHERE id IN ({marks})", list(ids))
    names = column_names(cursor)
    found = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
    conn.executemany(
        "INSERT INTO trash (id, content, project, trashed_at, reason, trashed_by, row, "
        "embedding, relations, versions, connections) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [_trash_entry(conn, row, reason, session_id, now) for row in found],
    )
    return delete_memories(conn, [row["id"] for row in found], now)


# Columns a trash entry's ``row`` leaves out: the embedding is kept beside it, and PostgreSQL's
# ``rowid`` (a column there, hidden in SQLite) is given again when the memory comes back.
_NOT_KEPT = frozenset({"embedding", "rowid"})


def _trash_entry(
    conn: Connection, row: dict[str, Any], reason: str, session_id: str | None, now: float
) -> tuple[Any, ...]:
    memory_id = row["id"]
    fields = {name: value for name, value in row.items() if name not in _NOT_KEPT}
    relations = conn.execute(
        f"SELECT {', '.join(RELATION_COLUMNS)} FROM relations WHERE from_id = ? OR to_id = ?",
        (memory_id, memory_id),
    ).fetchall()
    versions = conn.execute(
        f"SELECT {VERSION_COLUMNS} FROM memory_versions WHERE memory_id = ? ORDER BY version", (memory_id,)
    ).fetchall()
    connections = conn.execute(
        f"SELECT {', '.join(CONNECTION_COLUMNS)} FROM connections WHERE source_id = ? OR target_id = ?",
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


_ROW_COLUMNS = "entry, id, content, project, trashed_at, reason, trashed_by, consolidated_into"


def trash_rows(conn: Connection, limit: int, projects: Sequence[str] = ()) -> tuple[list[TrashRow], int]:
    """The most recently trashed entries first (of ``projects`` only, if given), at most ``limit``,
    and how many entries of those projects the trash holds."""
    where = f"WHERE project IN ({','.join('?' * len(projects))})" if projects else ""
    rows = conn.execute(
        f"SELECT {_ROW_COLUMNS} FROM trash {where} ORDER BY trashed_at DESC, entry DESC LIMIT ?",
        [*projects, limit],
    ).fetchall()
    total = conn.execute(f"SELECT COUNT(*) FROM trash {where}", list(projects)).fetchone()[0]
    return [TrashRow(*row) for row in rows], int(total)


def trashed(conn: Connection, ids: Sequence[str]) -> list[TrashRow]:
    """The newest trash entry of each of these ids (ids not in the trash are skipped)."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        f"SELECT {_ROW_COLUMNS} FROM trash "
        f"WHERE entry IN (SELECT max(entry) FROM trash WHERE id IN ({marks}) GROUP BY id)",
        list(ids),
    ).fetchall()
    return [TrashRow(*row) for row in rows]


def purge(conn: Connection, before: float | None) -> int:
    """Delete for good what was trashed before ``before`` (everything when None); returns how many."""
    if before is None:
        return conn.execute("DELETE FROM trash").rowcount
    return conn.execute("DELETE FROM trash WHERE trashed_at < ?", (before,)).rowcount


def secret(conn: Connection, key: str) -> str:
    """A random secret of this data directory, kept in store_meta under ``key`` (made once)."""
    conn.execute(
        "INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT DO NOTHING",
        (key, secrets.token_hex(32)),
    )
    return str(conn.execute("SELECT value FROM store_meta WHERE key = ?", (key,)).fetchone()[0])


class TrashBin:
    """The trash of one store of record: each call is one of its transactions."""

    def __init__(self, transaction: Transaction) -> None:
        self._transaction = transaction

    def move(self, ids: Sequence[str], reason: str, session_id: str | None) -> list[str]:
        """Move memories to the trash (see ``move_to_trash``); returns the ids that existed."""
        with self._transaction() as conn:
            return move_to_trash(conn, ids, reason, session_id, time.time())

    def restore(self, ids: Sequence[str], entries: Sequence[int] = ()) -> Restored:
        """Put trashed memories back (see ``restore``)."""
        with self._transaction() as conn:
            return restore(conn, ids, entries, time.time())

    def entries(self, limit: int, projects: Sequence[str] = ()) -> tuple[list[TrashRow], int]:
        """The latest trashed first (of ``projects`` only, if given), at most ``limit``, and how
        many entries of those the trash holds."""
        with self._transaction() as conn:
            return trash_rows(conn, limit, projects)

    def memory_count(self, projects: Sequence[str] = ()) -> int:
        """Of how many memories the trash holds entries (one forgotten twice has two), of
        ``projects`` only, if given."""
        where = f"WHERE project IN ({','.join('?' * len(projects))})" if projects else ""
        with self._transaction() as conn:
            counted = conn.execute(f"SELECT COUNT(DISTINCT id) FROM trash {where}", list(projects))
            return int(counted.fetchone()[0])

    def find(self, ids: Sequence[str]) -> list[TrashRow]:
        """The trash entries of these ids."""
        with self._transaction() as conn:
            return trashed(conn, ids)

    def starting_with(self, prefix: str, limit: int = 2) -> list[str]:
        """Up to ``limit`` distinct ids of trashed memories that start with ``prefix``."""
        with self._transaction() as conn:
            return ids_starting_with(conn, "trash", prefix, limit)

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
        """Select again, let ``confirm`` refuse a token that was used or whose dry run listed another
        set, record the token as used and move the set to the trash, all in one transaction
        (nothing can match or stop matching in between, and two prunes cannot share a token)."""
        now = time.time()
        with self._transaction() as conn:
            found, _ = prune_candidates(conn, criteria, now, spared_loaders, limit)
            digest = confirm(secret(conn, "prune_secret"), found, now, used_tokens(conn, now))
            mark_token_used(conn, digest, now + TOKEN_SECONDS)
            return move_to_trash(conn, [candidate.id for candidate in found], "pruned", session, now)
