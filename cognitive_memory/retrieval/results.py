"""What recall returns: ranked memories, split into core and peripheral, and bridges."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from cognitive_memory.core.memory import BridgeMemory, CognitiveMemory
from cognitive_memory.retrieval.scoring import ScoreBreakdown

__all__ = ["ExplainReason", "Explanation", "RankedMemory", "RetrievalResult", "split_core"]

ExplainReason = Literal[
    "returned", "below_rank", "below_floor", "not_candidate", "filtered", "other_project", "not_found"
]


@dataclass(frozen=True, slots=True)
class RankedMemory:
    """A recalled memory, its score and rank; ``superseded_by`` names the memories that supersede it."""

    memory: CognitiveMemory
    score: ScoreBreakdown
    rank: int
    superseded_by: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Explanation:
    """Why the memory ``memory_id`` named by the caller ranked where it did. ``score``: its score
    parts for the query, completed as a returned memory's are (None when not found); ``rank``: a
    returned memory's rank, else its place among the memories that passed the floor (for one the
    search never offered, the place its score would take); ``kind``: core, peripheral or bridge
    when returned; ``filters``: the filters it fails (payload names, as ``VectorFilter.failing``);
    ``project``: its project; ``last_score``: the last returned memory's score; ``needed``: below
    the floor, the evidence it needed (the floor, or the anchor when no memory reached it);
    ``passed``: how many memories passed the floor."""

    memory_id: str
    reason: ExplainReason
    score: ScoreBreakdown | None = None
    rank: int | None = None
    kind: str | None = None
    filters: tuple[str, ...] = ()
    project: str | None = None
    last_score: float | None = None
    needed: float | None = None
    passed: int = 0


@dataclass(frozen=True, slots=True)
class RetrievalResult:
    query: str
    core: list[RankedMemory]
    peripheral: list[RankedMemory]
    bridges: list[BridgeMemory]
    degraded: bool = False  # the vector index failed: found by words only
    # (vectors held, memories) when the index holds fewer than it should: what it lacks was found
    # by its words only
    shortfall: tuple[int, int] | None = None
    # Why each memory the caller named ranked where it did (``retrieval/explaining.py``).
    explained: Sequence[Explanation] = ()

    def memory_ids(self) -> list[str]:
        ranked = [r.memory.id for r in (*self.core, *self.peripheral)]
        return ranked + [b.memory.id for b in self.bridges]


def split_core(ranked: Sequence[RankedMemory], core_ratio: float, core_evidence: float | None = None) -> int:
    """How many leading results are core: the best and those scoring >= core_ratio x the best,
    as long as each one's own evidence of relevance reaches ``core_evidence`` (when given: then
    even the best may not be core) or the query names it by its key."""
    if not ranked:
        return 0
    bar = ranked[0].score.total * core_ratio
    count = 0
    for result in ranked:
        if count and result.score.total < bar:
            break
        if core_evidence is not None and result.score.evidence < core_evidence and not result.score.key:
            break
        count += 1
    return count
