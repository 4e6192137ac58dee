"""Why named memories ranked where they did in one recall (``recall_memories``' ``explain``): the
pure rule that reads what each stage decided and names the first stage that kept a memory out.

The stages, in the order a memory meets them (docs/recall.md#explaining-a-recall): the store
(``not_found``), the project scope (``other_project``) and the other filters (``filtered``), the
relevance floor (``below_floor``), the search (``not_candidate``: neither meaning nor words nor links
offered it) and the cut at ``max_results`` (``below_rank``). A memory named but returned is
``returned`` with its rank.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from cognitive_memory.core.ranking import RankingRow
from cognitive_memory.index.vector_store import VectorFilter
from cognitive_memory.retrieval.floor import RelevanceFloor
from cognitive_memory.retrieval.results import Explanation, RankedMemory
from cognitive_memory.retrieval.scoring import ScoreBreakdown

__all__ = ["FloorPass", "Kept", "explain", "with_bridges"]

Kept = list[tuple[RankingRow, ScoreBreakdown, float]]


@dataclass(frozen=True, slots=True)
class FloorPass:
    """What the relevance floor read and decided in one recall: each ranked memory's word share,
    own evidence and linked activation, the memories allowed in (None: the floor is off), and those
    that passed with their totals, best first."""

    shares: dict[str, float]
    own: dict[str, float]
    linked: dict[str, float]
    allowed: frozenset[str] | None
    kept: Kept

    def anchored(self, floor: RelevanceFloor) -> bool:
        """Whether some memory reached the anchor (else the floor lets none in)."""
        return any(value >= floor.anchor for value in self.own.values())


def explain(
    ids: Sequence[str],
    named: Mapping[str, tuple[RankingRow, ScoreBreakdown]],
    returned: Mapping[str, tuple[str, RankedMemory]],
    floor_pass: FloorPass,
    where: VectorFilter | None,
    floor: RelevanceFloor,
) -> list[Explanation]:
    """An explanation per id of ``ids``: ``named`` holds the rows found and their completed scores,
    ``returned`` the returned memories by id with their kind (core or peripheral)."""
    ranked = [memory for _, memory in returned.values()]
    last = max(ranked, key=lambda memory: memory.rank).score.total if ranked else None
    out = []
    for memory_id in ids:
        found = named.get(memory_id)
        made = Explanation(memory_id, "not_found", last_score=last, passed=len(floor_pass.kept))
        out.append(made if found is None else _explained(made, *found, returned, floor_pass, where, floor))
    return out


def _explained(
    made: Explanation,
    row: RankingRow,
    score: ScoreBreakdown,
    returned: Mapping[str, tuple[str, RankedMemory]],
    floor_pass: FloorPass,
    where: VectorFilter | None,
    floor: RelevanceFloor,
) -> Explanation:
    """The first stage that kept the memory of ``row`` out, or its rank when returned."""
    made = replace(made, reason="returned", score=score, project=row.project)
    if row.id in returned:
        kind, memory = returned[row.id]
        return replace(made, score=memory.score, rank=memory.rank, kind=kind)
    failing = where.failing(row.payload()) if where is not None and not where.is_empty() else ()
    if "project" in failing:
        return replace(made, reason="other_project", filters=tuple(f for f in failing if f != "project"))
    if failing:
        return replace(made, reason="filtered", filters=failing)
    candidate = row.id in floor_pass.own
    if not _passes(row.id, score, candidate, floor_pass, floor):
        needed = floor.floor if floor_pass.anchored(floor) else floor.anchor
        return replace(made, reason="below_floor", needed=needed)
    place = 1 + sum(1 for *_, total in floor_pass.kept if total > score.total)
    return replace(made, reason="below_rank" if candidate else "not_candidate", rank=place)


def _passes(
    memory_id: str, score: ScoreBreakdown, candidate: bool, floor_pass: FloorPass, floor: RelevanceFloor
) -> bool:
    """Whether the floor lets the memory in: as it decided for a ranked memory; for one the search
    never offered, by the same rule on its own evidence and links."""
    if floor_pass.allowed is None:
        return True
    if candidate:
        return memory_id in floor_pass.allowed
    reached = score.evidence >= floor.floor or score.linked >= floor.activation
    return floor_pass.anchored(floor) and reached


def with_bridges(explained: Sequence[Explanation], bridges: Sequence[str]) -> list[Explanation]:
    """``explained`` with the memories returned as bridges (after ranking) said to be returned."""
    return [
        replace(e, reason="returned", kind="bridge", rank=None) if e.memory_id in bridges else e
        for e in explained
    ]
