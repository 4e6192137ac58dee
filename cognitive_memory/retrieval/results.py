"""What recall returns: ranked memories, split into core and peripheral, and bridges."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cognitive_memory.core.memory import BridgeMemory, CognitiveMemory
from cognitive_memory.retrieval.scoring import ScoreBreakdown

__all__ = ["RankedMemory", "RetrievalResult", "split_core"]


@dataclass(frozen=True, slots=True)
class RankedMemory:
    """A recalled memory, its score and rank; ``superseded_by`` names the memories that supersede it."""

    memory: CognitiveMemory
    score: ScoreBreakdown
    rank: int
    superseded_by: tuple[str, ...] = ()


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

    def memory_ids(self) -> list[str]:
        ranked = [r.memory.id for r in (*self.core, *self.peripheral)]
        return ranked + [b.memory.id for b in self.bridges]


def split_core(ranked: Sequence[RankedMemory], core_ratio: float, core_evidence: float | None = None) -> int:
    """How many leading results are core: the best and those scoring >= core_ratio x the best,
    as long as each one's own evidence of relevance reaches ``core_evidence`` (when given: then
    even the best may not be core)."""
    if not ranked:
        return 0
    bar = ranked[0].score.total * core_ratio
    count = 0
    for result in ranked:
        if count and result.score.total < bar:
            break
        if core_evidence is not None and result.score.evidence < core_evidence:
            break
        count += 1
    return count
