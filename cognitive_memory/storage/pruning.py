"""The SQL that finds the memories a prune would move to the trash."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from cognitive_memory.core.pruning import DAY_SECONDS, PruneCandidate, PruneCriteria

__all__ = ["prune_candidates"]


def prune_candidates(
    conn: sqlite3.Connection, criteria: PruneCriteria, now: float, spared_loaders: Sequence[str], limit: int
) -> tuple[list[PruneCandidate], int]:
    """The memories matching every criterion, except those of ``spared_loaders`` and the
    ``keep_latest`` newest; at most ``limit`` of them, oldest first, and how many match in all."""
    where, params = _conditions(criteria, now, spared_loaders)
    rows = conn.execute(
        "SELECT id, content, timestamp, last_accessed, importance_score, tags, project, hierarchy_level "
        f"FROM memories WHERE {' AND '.join(where)} ORDER BY timestamp DESC, id DESC LIMIT -1 OFFSET ?",
        [*params, criteria.keep_latest],
    ).fetchall()
    rows.reverse()
    candidates = [
        PruneCandidate(
            memory_id, content, stamp, accessed, importance, tuple(json.loads(tags)), project, level
        )
        for memory_id, content, stamp, accessed, importance, tags, project, level in rows[:limit]
    ]
    return candidates, len(rows)


def _conditions(
    criteria: PruneCriteria, now: float, spared_loaders: Sequence[str]
) -> tuple[list[str], list[Any]]:
    where = [f"(loader_type IS NULL OR loader_type NOT IN ({','.join('?' * len(spared_loaders))}))"]
    params: list[Any] = list(spared_loaders)
    if criteria.older_than_days is not None:
        where.append("timestamp < ?")
        params.append(now - criteria.older_than_days * DAY_SECONDS)
    if criteria.not_accessed_days is not None:
        where.append("COALESCE(last_accessed, timestamp) < ?")
        params.append(now - criteria.not_accessed_days * DAY_SECONDS)
    if criteria.max_importance is not None:
        where.append("importance_score <= ?")
        params.append(criteria.max_importance)
    if criteria.tags:
        marks = ",".join("?" * len(criteria.tags))
        where.append(f"EXISTS (SELECT 1 FROM json_each(memories.tags) WHERE value IN ({marks}))")
        params += criteria.tags
    for values, column in ((criteria.projects, "project"), (criteria.hierarchy_levels, "hierarchy_level")):
        if values:
            where.append(f"{column} IN ({','.join('?' * len(values))})")
            params += values
    return where, params
