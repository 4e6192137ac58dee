"""The SQL that finds the memories a prune would move to the trash, and that keeps a confirm token
from being used twice."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from cognitive_memory.core.pruning import DAY_SECONDS, PruneCandidate, PruneCriteria
from cognitive_memory.storage.dialect import Dialect
from cognitive_memory.storage.sql import EVERY_ROW, Connection

__all__ = ["mark_token_used", "not_loaded_by", "prune_candidates", "used_tokens"]


def prune_candidates(
    conn: Connection, criteria: PruneCriteria, now: float, spared_loaders: Sequence[str], limit: int
) -> tuple[list[PruneCandidate], int]:
    """The memories matching every criterion, except those of ``spared_loaders`` and the
    ``keep_latest`` newest; at most ``limit`` of them, oldest first, and how many match in all."""
    where, params = _conditions(criteria, now, spared_loaders, conn.dialect)
    rows = conn.execute(
        f"SELECT id, content, timestamp, last_accessed, importance_score, "
        f"{conn.dialect.tags_list('memories.tags')}, project, hierarchy_level "
        f"FROM memories WHERE {' AND '.join(where)} ORDER BY timestamp DESC, id DESC LIMIT ? OFFSET ?",
        [*params, EVERY_ROW, criteria.keep_latest],
    ).fetchall()
    rows.reverse()
    versions = _versions(conn, [row[0] for row in rows[:limit]])
    candidates = [
        PruneCandidate(
            memory_id,
            content,
            stamp,
            accessed,
            importance,
            tuple(json.loads(tags)),
            project,
            level,
            versions.get(memory_id, 0),
        )
        for memory_id, content, stamp, accessed, importance, tags, project, level in rows[:limit]
    ]
    return candidates, len(rows)


def _versions(conn: Connection, ids: Sequence[str]) -> dict[str, int]:
    """How many earlier versions each of ``ids`` has (ids without any are left out)."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        f"SELECT memory_id, max(version) FROM memory_versions WHERE memory_id IN ({marks}) "
        "GROUP BY memory_id",
        list(ids),
    ).fetchall()
    return {memory_id: int(version) for memory_id, version in rows}


def used_tokens(conn: Connection, now: float) -> set[str]:
    """The digests of the confirm tokens used and not yet expired (the expired ones are dropped)."""
    conn.execute("DELETE FROM prune_tokens_used WHERE expires_at < ?", (now,))
    return {row[0] for row in conn.execute("SELECT digest FROM prune_tokens_used")}


def mark_token_used(conn: Connection, digest: str, until: float) -> None:
    """Record a confirm token as used; it is kept until ``until``, when it would have expired anyway."""
    conn.execute("INSERT INTO prune_tokens_used (digest, expires_at) VALUES (?, ?)", (digest, until))


def _conditions(
    criteria: PruneCriteria, now: float, spared_loaders: Sequence[str], dialect: Dialect
) -> tuple[list[str], list[Any]]:
    where = [not_loaded_by(spared_loaders)]
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
        tags = dialect.list_items(dialect.tags_list("memories.tags"), "tag")
        where.append(f"EXISTS (SELECT 1 FROM {tags} WHERE tag.value IN ({marks}))")
        params += criteria.tags
    for values, column in ((criteria.projects, "project"), (criteria.hierarchy_levels, "hierarchy_level")):
        if values:
            where.append(f"{column} IN ({','.join('?' * len(values))})")
            params += values
    return where, params


def not_loaded_by(loaders: Sequence[str]) -> str:
    """A condition: the memory was not loaded by one of ``loaders`` (bound next; ``IN ()`` is
    SQLite's alone)."""
    if not loaders:
        return "TRUE"
    return f"(loader_type IS NULL OR loader_type NOT IN ({','.join('?' * len(loaders))}))"
