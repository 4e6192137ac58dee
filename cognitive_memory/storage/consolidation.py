"""SQL for consolidating near-duplicate memories into one survivor, run in the store's
transactions: one group is one transaction, so a crash leaves the group as it was or merged.

A merge keeps the survivor's previous state as a version (``versions.rewrite_memory``), gives it
the union of the group's tags, the largest importance, the sum of access counts and the latest
access, points the others' user links at it (``relations.insert_link``: no self-links, no
duplicates, no supersedes cycles), and moves the others to the trash with reason ``consolidated``
and ``consolidated_into`` set. Connections (links in time, co-recall) are not moved: they are
derived, and the trash keeps them for a restore.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Sequence

import numpy as np

from cognitive_memory.core.consolidation import DuplicateCandidate
from cognitive_memory.core.store.values import MergedGroup, ProjectRows
from cognitive_memory.core.validation import MAX_TAGS
from cognitive_memory.storage.properties import keep
from cognitive_memory.storage.pruning import not_loaded_by
from cognitive_memory.storage.relations import insert_link
from cognitive_memory.storage.rows import MEMORY_COLUMNS, readable_memories
from cognitive_memory.storage.sql import Connection, Transaction
from cognitive_memory.storage.trash import move_to_trash
from cognitive_memory.storage.versions import rewrite_memory

__all__ = [
    "LAST_CONSOLIDATION",
    "DuplicateMerge",
    "MergedGroup",
    "ProjectRows",
    "merge_group",
    "project_rows",
    "projects",
]

# The store_meta key of the last applied consolidation (JSON: at, groups, trashed, links).
LAST_CONSOLIDATION = "last_consolidation"
REASON = "consolidated"


def projects(conn: Connection, project: str | None, spared: Sequence[str]) -> list[str]:
    """The projects holding two or more memories that may be merged (only ``project`` if given)."""
    only = "" if project is None else " AND project = ?"
    rows = conn.execute(
        f"SELECT project FROM memories WHERE {not_loaded_by(spared)}{only} "
        "GROUP BY project HAVING COUNT(*) > 1 ORDER BY project",
        [*spared, *([] if project is None else [project])],
    ).fetchall()
    return [str(row[0]) for row in rows]


def project_rows(
    conn: Connection, project: str, spared: Sequence[str], dimension: int | None = None
) -> ProjectRows:
    """The memories of ``project`` not loaded by a ``spared`` loader, in the order stored (a row
    whose embedding is not ``dimension`` 32-bit floats is left out: doctor names it)."""
    size = "length(embedding) = ?" if dimension else "length(embedding) % 4 = 0"
    rows = conn.execute(
        "SELECT id, access_count, timestamp, content, embedding FROM memories WHERE project = ? AND "
        f"{not_loaded_by(spared)} AND {conn.dialect.holds_bytes('embedding')} "
        f"AND {size} ORDER BY rowid",
        [project, *spared, *([4 * dimension] if dimension else [])],
    ).fetchall()
    candidates = [DuplicateCandidate(row[0], int(row[1]), float(row[2]), len(row[3])) for row in rows]
    vectors = np.stack([np.frombuffer(row[4], dtype="<f4") for row in rows]) if rows else np.zeros((0, 0))
    return ProjectRows(project, candidates, [row[3] for row in rows], vectors.astype(np.float32))


def merge_group(
    conn: Connection, survivor_id: str, others: Sequence[str], session_id: str | None, now: float
) -> MergedGroup | None:
    """Merge ``others`` into ``survivor_id`` (see the module's docstring). Ids gone since the
    plan are skipped; None when the survivor or all the others are gone."""
    ids = [survivor_id, *others]
    marks = ",".join("?" * len(ids))
    rows = conn.execute(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN ({marks})", ids).fetchall()
    found = {memory.id: memory for memory in readable_memories(rows, set())}  # unreadable: not merged
    gone = [
        memory_id for memory_id in dict.fromkeys(others) if memory_id in found and memory_id != survivor_id
    ]
    survivor = found.get(survivor_id)
    if survivor is None or not gone:
        return None
    group = [survivor, *(found[memory_id] for memory_id in gone)]
    tags = tuple(dict.fromkeys(tag for memory in group for tag in memory.tags))[:MAX_TAGS]
    importance = max(memory.importance_score for memory in group)
    merged = dataclasses.replace(survivor, tags=tags, importance_score=importance)
    version = rewrite_memory(conn, merged, survivor, session_id, now)
    conn.execute(
        f"UPDATE memories SET access_count = (SELECT SUM(access_count) FROM memories WHERE id IN ({marks})), "
        f"last_accessed = (SELECT MAX(last_accessed) FROM memories WHERE id IN ({marks})) WHERE id = ?",
        [*ids, *ids, survivor_id],
    )
    links = _repoint_links(conn, survivor_id, gone, session_id, now)
    trashed = move_to_trash(conn, gone, REASON, session_id, now)
    conn.executemany(
        "UPDATE trash SET consolidated_into = ? WHERE entry = (SELECT max(entry) FROM trash WHERE id = ?)",
        [(survivor_id, i) for i in trashed],
    )
    return MergedGroup(survivor_id, trashed, version, links)


def _repoint_links(
    conn: Connection, survivor: str, gone: Sequence[str], session_id: str | None, now: float
) -> int:
    """Copy the user links of ``gone`` onto ``survivor``; returns how many were new. The originals
    go to the trash with their memories (and come back with a restore)."""
    marks = ",".join("?" * len(gone))
    rows = conn.execute(
        f"SELECT from_id, to_id, relation, note, weight FROM relations WHERE from_id IN ({marks}) "
        f"OR to_id IN ({marks}) ORDER BY created_at",
        [*gone, *gone],
    ).fetchall()
    moved = set(gone)
    created = 0
    for from_id, to_id, relation, note, weight in rows:
        start = survivor if from_id in moved else from_id
        end = survivor if to_id in moved else to_id
        if start != end:
            created += insert_link(conn, (start, end, relation), note, session_id, now, weight).created
    return created


class DuplicateMerge:
    """Consolidation on one store of record: each call is one of its transactions."""

    def __init__(self, transaction: Transaction, dimension: int | None = None) -> None:
        self._transaction = transaction
        self._dimension = dimension

    def projects(self, project: str | None, spared: Sequence[str]) -> list[str]:
        """See ``projects``."""
        with self._transaction() as conn:
            return projects(conn, project, spared)

    def rows(self, project: str, spared: Sequence[str]) -> ProjectRows:
        """See ``project_rows``."""
        with self._transaction() as conn:
            return project_rows(conn, project, spared, self._dimension)

    def merge(self, survivor: str, others: Sequence[str], session_id: str | None) -> MergedGroup | None:
        """Merge one group in one transaction (see ``merge_group``)."""
        with self._transaction() as conn:
            return merge_group(conn, survivor, others, session_id, time.time())

    def record(self, summary: dict[str, float | int]) -> None:
        """Keep ``summary`` as the last consolidation (store_meta)."""
        with self._transaction() as conn:
            keep(conn, LAST_CONSOLIDATION, json.dumps(summary))
