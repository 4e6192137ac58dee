"""Consolidation of near duplicates: find groups of memories at or above a cosine in the same
project, keep one survivor per group and move the others to the trash (``consolidated_into``).

Planning reads and changes nothing. Memories loaded from files or git are never candidates (their
source is their truth); session lessons and stored memories are. Each project's vectors are read
from SQLite; up to ``EXACT_LIMIT`` memories the nearest neighbours are computed exactly, above it
each memory asks the vector index for its ``NEIGHBOURS`` nearest (bounded work, approximate).
Applying merges one group per SQLite transaction (``storage/consolidation.py``), then updates the
vector index and records the run in store_meta for ``memory_status``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from cognitive_memory.core.consolidation import (
    NEIGHBOURS,
    DuplicateCandidate,
    group_pairs,
    nearest_pairs,
    survivor_first,
    unit_rows,
)
from cognitive_memory.core.memory import LOADED_TYPES
from cognitive_memory.errors import InvalidInputError
from cognitive_memory.index.vector_store import VectorFilter
from cognitive_memory.storage.consolidation import MergedGroup, ProjectRows
from cognitive_memory.system import CognitiveSystem

__all__ = [
    "EXACT_LIMIT",
    "ConsolidationPlan",
    "DuplicateGroup",
    "GroupMember",
    "apply_plan",
    "plan_consolidation",
]

# Projects with up to this many candidates are searched exactly (n x n cosines in blocks).
EXACT_LIMIT = 20_000
MIN_THRESHOLD = 0.5

Advance = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class GroupMember:
    """A memory of a group, with its cosine to the group's survivor (1.0 for the survivor)."""

    id: str
    content: str
    access_count: int
    similarity: float


@dataclass(frozen=True, slots=True)
class DuplicateGroup:
    """Near duplicates of one project; ``members[0]`` is the survivor."""

    project: str
    members: tuple[GroupMember, ...]

    @property
    def survivor(self) -> GroupMember:
        return self.members[0]

    @property
    def others(self) -> tuple[GroupMember, ...]:
        return self.members[1:]


@dataclass(frozen=True, slots=True)
class ConsolidationPlan:
    """What a run would do: the groups found among ``scanned`` candidate memories."""

    threshold: float
    scanned: int
    groups: list[DuplicateGroup]


def plan_consolidation(
    system: CognitiveSystem,
    threshold: float | None = None,
    project: str | None = None,
    *,
    exact_limit: int = EXACT_LIMIT,
    advance: Advance | None = None,
) -> ConsolidationPlan:
    """The dry run: groups of near duplicates (cosine >= ``threshold``, default the store's
    near-duplicate threshold) in each project, or in ``project`` only. Changes nothing."""
    cutoff = system.near_duplicate if threshold is None else threshold
    if not MIN_THRESHOLD <= cutoff <= 1.0:
        raise InvalidInputError(
            f"The threshold must be between {MIN_THRESHOLD} and 1.0 (cosine); got {cutoff}."
        )
    duplicates = system.records.duplicates
    groups: list[DuplicateGroup] = []
    scanned = 0
    names = duplicates.projects(project, LOADED_TYPES)
    for done, name in enumerate(names, start=1):
        rows = duplicates.rows(name, LOADED_TYPES)
        units = unit_rows(rows.vectors)
        if len(rows.candidates) <= exact_limit:
            pairs = nearest_pairs(units, cutoff)
        else:
            pairs = _index_pairs(system, rows, cutoff)
        groups += [_group(rows, units, members) for members in group_pairs(len(rows.candidates), pairs)]
        scanned += len(rows.candidates)
        if advance is not None:
            advance(done, len(names))
    return ConsolidationPlan(cutoff, scanned, groups)


def _index_pairs(
    system: CognitiveSystem, rows: ProjectRows, threshold: float
) -> list[tuple[int, int, float]]:
    """Each candidate's nearest neighbours of its project from the vector index (loaded memories
    among the hits are skipped), as ``(i, j, cosine)`` with i < j."""
    position = {candidate.id: i for i, candidate in enumerate(rows.candidates)}
    where = VectorFilter(projects=(rows.project,))
    found: dict[tuple[int, int], float] = {}
    for i, vector in enumerate(rows.vectors):
        for hit in system.vectors.search(vector, NEIGHBOURS + 1, where):
            j = position.get(hit.id)
            if j is not None and j != i and hit.score >= threshold:
                found[(min(i, j), max(i, j))] = hit.score
    return [(i, j, score) for (i, j), score in sorted(found.items())]


def _group(rows: ProjectRows, units: np.ndarray, members: Sequence[int]) -> DuplicateGroup:
    by_id = {rows.candidates[i].id: i for i in members}
    ordered: list[DuplicateCandidate] = survivor_first([rows.candidates[i] for i in members])
    first = units[by_id[ordered[0].id]]
    return DuplicateGroup(
        rows.project,
        tuple(
            GroupMember(
                candidate.id,
                rows.contents[by_id[candidate.id]],
                candidate.access_count,
                round(float(np.clip(first @ units[by_id[candidate.id]], -1.0, 1.0)), 4),
            )
            for candidate in ordered
        ),
    )


def apply_plan(
    system: CognitiveSystem, plan: ConsolidationPlan, session_id: str | None, advance: Advance | None = None
) -> list[MergedGroup]:
    """Merge each group of ``plan`` (one transaction each; groups whose memories changed since are
    merged as far as they still exist), update the vector index and record the run."""
    merged: list[MergedGroup] = []
    for done, group in enumerate(plan.groups, start=1):
        result = system.records.duplicates.merge(group.survivor.id, [m.id for m in group.others], session_id)
        if result is not None:
            merged.append(result)
            system.replication.unindex(result.trashed)
            system.replication.index(system.records.memories.get([result.survivor]))
        if advance is not None:
            advance(done, len(plan.groups))
    summary = {
        "at": time.time(),
        "threshold": plan.threshold,
        "scanned": plan.scanned,
        "groups": len(merged),
        "trashed": sum(len(result.trashed) for result in merged),
        "links": sum(result.links for result in merged),
    }
    system.records.duplicates.record(summary)
    return merged
