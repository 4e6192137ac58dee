"""Recall: hybrid candidates, fusion, activation spreading, ranking; core, peripheral, bridges."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from cognitive_memory.core.memory import BridgeMemory, CognitiveMemory, Vector
from cognitive_memory.errors import StorageError
from cognitive_memory.retrieval.activation import pass_to_answers, spread_activation
from cognitive_memory.retrieval.bridges import BridgeScore, score_bridges
from cognitive_memory.retrieval.fusion import fuse
from cognitive_memory.retrieval.scoring import RankWeights, ScoreBreakdown, score_candidate
from cognitive_memory.retrieval.speakers import query_names, speaker
from cognitive_memory.retrieval.succession import successors_first
from cognitive_memory.storage.sqlite_store import RankingRow, SQLiteMemoryStore
from cognitive_memory.storage.vector_store import VectorFilter, VectorStore

__all__ = ["RankedMemory", "RetrievalConfig", "RetrievalResult", "Retriever", "split_core"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RetrievalConfig:
    """Knobs of recall; the defaults are documented in README (Recall) and measured by bench/."""

    candidate_pool: int = 50
    semantic_weight: float = 0.5
    min_similarity: float = 0.1
    activation_decay: float = 0.2
    activation_depth: int = 2
    activation_fan_out: int = 8
    answer_share: float = 0.4
    core_ratio: float = 0.8
    bridge_threshold: float = 0.5
    bridge_limit: int = 3
    bridge_anchors: int = 3
    bridge_neighbours: int = 10
    weights: RankWeights = field(default_factory=RankWeights)


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
    degraded: bool = False

    def memory_ids(self) -> list[str]:
        ranked = [r.memory.id for r in (*self.core, *self.peripheral)]
        return ranked + [b.memory.id for b in self.bridges]


def split_core(ranked: Sequence[RankedMemory], core_ratio: float) -> int:
    """How many leading results are core: those scoring >= core_ratio x the best (at least one)."""
    if not ranked:
        return 0
    bar = ranked[0].score.total * core_ratio
    count = 1
    while count < len(ranked) and ranked[count].score.total >= bar:
        count += 1
    return count


@dataclass(frozen=True, slots=True)
class _Signals:
    """What recall knows about each memory before bookkeeping terms are added."""

    similarity: dict[str, float]
    fused: dict[str, tuple[float, float, float]]
    activation: dict[str, float]
    degraded: bool


class Retriever:
    """Finds and ranks memories for a query."""

    def __init__(self, memories: SQLiteMemoryStore, vectors: VectorStore, config: RetrievalConfig) -> None:
        self._memories = memories
        self._vectors = vectors
        self.config = config

    def retrieve(
        self,
        query: str,
        query_vector: Vector,
        *,
        max_results: int,
        include_bridges: bool,
        now: datetime,
        where: VectorFilter | None = None,
    ) -> RetrievalResult:
        signals = self._signals(query, query_vector, max(self.config.candidate_pool, max_results * 3), where)
        reached = list(dict.fromkeys([*signals.fused, *signals.activation]))
        # Rank on light rows; read whole memories only for what is returned.
        rows = self._memories.ranking_rows(reached)
        if where is not None and not where.is_empty():
            # Words and links reach memories the vector filter never saw: the same rule applies.
            rows = [row for row in rows if where.matches(row.payload(with_tags=bool(where.tags)))]
        best = self._rank(rows, signals, query_names(query), query_vector, now)[:max_results]
        ranked = self._ranked(best)
        cut = split_core(ranked, self.config.core_ratio)
        core, peripheral = ranked[:cut], ranked[cut:]
        taken = {r.memory.id for r in ranked}
        wanted = include_bridges and not signals.degraded
        bridges = self._bridges(query_vector, core, taken, where) if wanted else []
        return RetrievalResult(query, core, peripheral, bridges, signals.degraded)

    def _ranked(self, best: Sequence[tuple[RankingRow, ScoreBreakdown]]) -> list[RankedMemory]:
        """Whole memories for the best rows, each moved after the memories that supersede it."""
        ids = [row.id for row, _ in best]
        successors = self._memories.superseded_by(ids)
        scores = {row.id: score for row, score in best}
        by_id = {m.id: m for m in self._memories.get(ids)}
        order = [memory_id for memory_id in successors_first(ids, successors) if memory_id in by_id]
        return [
            RankedMemory(by_id[memory_id], scores[memory_id], rank, tuple(successors.get(memory_id, ())))
            for rank, memory_id in enumerate(order, start=1)
        ]

    def _signals(self, query: str, query_vector: Vector, pool: int, where: VectorFilter | None) -> _Signals:
        cfg = self.config
        try:
            hits = self._vectors.search(query_vector, pool, where, precise=True)
            degraded = False
        except StorageError as exc:
            # The index is down: recall goes on with words alone (cosine still comes from SQLite).
            logger.warning("Vector search failed, recalling by words only: %s", exc)
            hits, degraded = [], True
        similarity = {hit.id: hit.score for hit in hits if hit.score >= cfg.min_similarity}
        lexical = dict(self._memories.lexical_search(query, pool))
        missing = [memory_id for memory_id in lexical if memory_id not in similarity]
        for memory_id, vector in self._memories.vectors(missing).items():
            similarity[memory_id] = float(vector @ query_vector)
        fused = fuse(similarity, lexical, cfg.semantic_weight)
        seeds = {memory_id: parts[2] for memory_id, parts in fused.items()}
        graph = self._memories.neighbours(list(seeds))
        if cfg.activation_depth > 1:
            beyond = {n for edges in graph.values() for n, _ in edges} - graph.keys()
            graph |= self._memories.neighbours(sorted(beyond))
        activation = spread_activation(
            seeds,
            graph,
            decay=cfg.activation_decay,
            max_depth=cfg.activation_depth,
            fan_out=cfg.activation_fan_out,
        )
        if cfg.answer_share > 0:
            answers = self._memories.answers(list(seeds))
            activation = pass_to_answers(activation, seeds, answers, cfg.answer_share)
        return _Signals(similarity, fused, activation, degraded)

    def _rank(
        self,
        rows: Sequence[RankingRow],
        signals: _Signals,
        names: frozenset[str],
        query_vector: Vector,
        now: datetime,
    ) -> list[tuple[RankingRow, ScoreBreakdown]]:
        weights = self.config.weights
        stamp = now.timestamp()
        scored = []
        for row in rows:
            said_by = speaker(row.content)
            semantic, lexical, relevance = signals.fused.get(row.id, (0.0, 0.0, 0.0))
            similarity = signals.similarity.get(row.id)
            if similarity is None:
                similarity = float(row.embedding @ query_vector)
            score = score_candidate(
                similarity,
                semantic=semantic,
                lexical=lexical,
                relevance=relevance,
                activation=signals.activation.get(row.id, 0.0),
                speaker_named=said_by is not None and said_by in names,
                importance=row.importance_score,
                age_days=(stamp - row.timestamp) / 86_400,
                strength=row.strength,
                is_session_lesson=row.loader_type == "session_lesson",
                weights=weights,
            )
            scored.append((row, score))
        scored.sort(key=lambda pair: pair[1].total, reverse=True)
        return scored

    def _bridges(
        self, query_vector: Vector, core: Sequence[RankedMemory], taken: set[str], where: VectorFilter | None
    ) -> list[BridgeMemory]:
        anchors = {
            r.memory.id: r.memory.cognitive_embedding
            for r in core[: self.config.bridge_anchors]
            if r.memory.cognitive_embedding is not None
        }
        neighbour_ids: list[str] = []
        for vector in anchors.values():
            for hit in self._vectors.search(vector, self.config.bridge_neighbours + len(taken), where):
                if hit.id not in taken and hit.id not in neighbour_ids:
                    neighbour_ids.append(hit.id)
        candidates = self._memories.vectors(neighbour_ids)
        scores = score_bridges(
            query_vector,
            anchors,
            candidates,
            threshold=self.config.bridge_threshold,
            limit=self.config.bridge_limit,
        )
        by_id = {m.id: m for m in self._memories.get([s.memory_id for s in scores])}
        anchor_text = {r.memory.id: r.memory.content for r in core}
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
