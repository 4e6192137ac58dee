"""Recall's last stage: bridges, the memories far from the query yet close to what it found.

The vector neighbours of the leading core memories, all searched in one call to the index (under
a session filter among the session's memories), scored by ``bridges.py``'s pure math against the
query and the core memory each is near, none of them already returned; their vectors and records
in one read of the store.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from cognitive_memory.core.memory import BridgeMemory, Vector
from cognitive_memory.index.vector_store import VectorFilter, VectorStore
from cognitive_memory.retrieval.bridges import BridgeScore, score_bridges
from cognitive_memory.retrieval.reading import MemoryReads, RankingReads
from cognitive_memory.retrieval.results import RankedMemory

__all__ = ["Bridging"]


@dataclass(frozen=True, slots=True)
class Bridging:
    """How bridges are found: ``anchors`` core memories searched for ``neighbours`` each, at most
    ``limit`` bridges whose score reaches ``threshold``; the index, the store's memories and
    vectors, and ``together`` to make the store's reads one."""

    vectors: VectorStore
    memories: MemoryReads
    ranking: RankingReads
    together: Callable[[Callable[[], list[BridgeMemory]]], list[BridgeMemory]]
    anchors: int
    neighbours: int
    threshold: float
    limit: int

    def find(
        self,
        query_vector: Vector,
        core: Sequence[RankedMemory],
        peripheral: Sequence[RankedMemory],
        searched: VectorFilter | None,
    ) -> list[BridgeMemory]:
        """The bridges of a recall that returned ``core`` and ``peripheral``, best first."""
        taken = {r.memory.id for r in (*core, *peripheral)}
        anchors = {
            r.memory.id: r.memory.cognitive_embedding
            for r in core[: self.anchors]
            if r.memory.cognitive_embedding is not None
        }
        if not anchors:
            return []
        limit = self.neighbours + len(taken)
        near = self.vectors.search_many(list(anchors.values()), limit, searched)
        hits = [i for i in dict.fromkeys(hit.id for hits in near for hit in hits) if i not in taken]
        if not hits:
            return []
        anchor_text = {r.memory.id: r.memory.content for r in core}
        return self.together(partial(self._bridged, query_vector, anchors, hits, anchor_text))

    def _bridged(
        self, query_vector: Vector, anchors: dict[str, Vector], hits: list[str], anchor_text: dict[str, str]
    ) -> list[BridgeMemory]:
        """The bridges among ``hits`` (read from the store), best first."""
        scores = score_bridges(
            query_vector, anchors, self.ranking.vectors(hits), threshold=self.threshold, limit=self.limit
        )
        by_id = {m.id: m for m in self.memories.get([s.memory_id for s in scores])}
        return [
            BridgeMemory(
                by_id[s.memory_id],
                s.novelty_score,
                s.connection_potential,
                s.bridge_score,
                _explain(s, anchor_text[s.connected_to]),
                s.connected_to,
            )
            for s in scores
            if s.memory_id in by_id
        ]


def _explain(score: BridgeScore, anchor: str) -> str:
    snippet = " ".join(anchor.split())
    snippet = snippet if len(snippet) <= 60 else snippet[:57] + "..."
    return (
        f"Close to the core memory \u201c{snippet}\u201d (connection {score.connection_potential:.2f}) "
        f"though far from the query (novelty {score.novelty_score:.2f})"
    )
