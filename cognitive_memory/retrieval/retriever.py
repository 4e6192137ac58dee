"""Recall: hybrid candidates, fusion, activation spreading, ranking; core, peripheral, bridges."""

from __future__ import annotations

import heapq
import logging
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from datetime import datetime

from cognitive_memory.core.memory import BridgeMemory, CognitiveMemory, SourceKind, Vector
from cognitive_memory.core.strength import effective_strength
from cognitive_memory.errors import StorageError
from cognitive_memory.index.vector_store import VectorFilter, VectorStore
from cognitive_memory.retrieval.activation import pass_to_answers, spread_activation
from cognitive_memory.retrieval.bridges import BridgeScore, score_bridges
from cognitive_memory.retrieval.floor import RelevanceFloor, evidence, passing
from cognitive_memory.retrieval.fusion import fuse
from cognitive_memory.retrieval.reading import RecallReads
from cognitive_memory.retrieval.scoring import RankWeights, ScoreBreakdown, score_candidate, word_bonus
from cognitive_memory.retrieval.speakers import names_speaker, query_names
from cognitive_memory.retrieval.succession import successors_first
from cognitive_memory.storage.ranking import RankingRow

__all__ = ["RankedMemory", "RetrievalConfig", "RetrievalResult", "Retriever", "split_core"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RetrievalConfig:
    """Knobs of recall; the defaults are documented in docs/recall.md and measured by bench/."""

    candidate_pool: int = 50
    semantic_weight: float = 0.5
    min_similarity: float = 0.1
    activation_decay: float = 0.2
    activation_depth: int = 1
    activation_fan_out: int = 8
    activation_pool: int = 10
    answer_share: float = 0.4
    core_ratio: float = 0.8
    bridge_threshold: float = 0.5
    bridge_limit: int = 3
    bridge_anchors: int = 3
    bridge_neighbours: int = 10
    weights: RankWeights = field(default_factory=RankWeights)
    floor: RelevanceFloor = field(default_factory=RelevanceFloor)


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


@dataclass(frozen=True, slots=True)
class _Signals:
    """What recall knows about each memory before bookkeeping terms are added."""

    similarity: dict[str, float]
    fused: dict[str, tuple[float, float, float]]
    activation: dict[str, float]
    graph: dict[str, list[tuple[str, float]]]
    timeless: dict[str, list[tuple[str, float]]]
    answers: dict[str, str]
    degraded: bool


class Retriever:
    """Finds and ranks memories for a query."""

    def __init__(self, records: RecallReads, vectors: VectorStore, config: RetrievalConfig) -> None:
        self._memories = records.memories
        self._links = records.links
        self._words = records.words
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
        max_total: int | None = None,
        words: Future[list[tuple[str, float]]] | None = None,
    ) -> RetrievalResult:
        """``words``, when given, is the lexical search of ``query`` for ``pool_size(max_results)``
        already under way on another thread (CognitiveSystem.retrieve starts it beside the
        embedding); otherwise it runs here."""
        searched = self._memories.index_filter(where)
        pool = self.pool_size(max_results)
        signals = self._signals(query, query_vector, pool, searched, words)
        reached = [*signals.fused, *_most_activated(signals, self.config.activation_pool)]
        # Rank on light rows; read whole memories only for what is returned.
        rows = self._memories.ranking_rows(reached)
        if where is not None and not where.is_empty():
            # Words and links reach memories the vector filter never saw: the same rule applies.
            rows = [row for row in rows if where.matches(row.payload(with_tags=bool(where.tags)))]
        scored = self._rank(rows, signals, query_names(query), query_vector, now)
        best = self._floored(query, scored, signals, max_results)
        ranked = self._ranked(best)
        floor = self.config.floor
        cut = split_core(ranked, self.config.core_ratio, floor.core if floor.enabled else None)
        core, peripheral = ranked[:cut], ranked[cut:]
        taken = {r.memory.id for r in ranked}
        # max_total caps core + peripheral + bridges: bridges take what the ranked memories leave.
        room = self.config.bridge_limit if max_total is None else max_total - len(ranked)
        wanted = include_bridges and not signals.degraded and room > 0
        bridges = self._bridges(query_vector, core, taken, searched)[:room] if wanted else []
        return RetrievalResult(query, core, peripheral, bridges, signals.degraded)

    def pool_size(self, max_results: int) -> int:
        """How many candidates each search (meaning, words) offers for ``max_results``."""
        return max(self.config.candidate_pool, max_results * 3)

    def _ranked(self, best: Sequence[tuple[RankingRow, ScoreBreakdown]]) -> list[RankedMemory]:
        """Whole memories for the best rows, each moved after the memories that supersede it."""
        ids = [row.id for row, _ in best]
        successors = self._links.superseded_by(ids)
        scores = {row.id: score for row, score in best}
        by_id = {m.id: m for m in self._memories.get(ids)}
        order = [memory_id for memory_id in successors_first(ids, successors) if memory_id in by_id]
        return [
            RankedMemory(by_id[memory_id], scores[memory_id], rank, tuple(successors.get(memory_id, ())))
            for rank, memory_id in enumerate(order, start=1)
        ]

    def _signals(
        self,
        query: str,
        query_vector: Vector,
        pool: int,
        where: VectorFilter | None,
        words: Future[list[tuple[str, float]]] | None,
    ) -> _Signals:
        cfg = self.config
        try:
            hits = self._vectors.search(query_vector, pool, where, precise=True)
            degraded = False
        except StorageError as exc:
            # The index is down: recall goes on with words alone (cosine still comes from SQLite).
            logger.warning("Vector search failed, recalling by words only: %s", exc)
            hits, degraded = [], True
        similarity = {hit.id: hit.score for hit in hits if hit.score >= cfg.min_similarity}
        lexical = dict(self._words.search(query, pool) if words is None else words.result())
        missing = [memory_id for memory_id in lexical if memory_id not in similarity]
        for memory_id, vector in self._memories.vectors(missing).items():
            similarity[memory_id] = float(vector @ query_vector)
        fused = fuse(similarity, lexical, cfg.semantic_weight)
        seeds = {memory_id: parts[2] for memory_id, parts in fused.items()}
        graph, timeless = self._links.neighbourhood(list(seeds))
        if cfg.activation_depth > 1:
            beyond = {n for edges in graph.values() for n, _ in edges} - graph.keys()
            more, more_timeless = self._links.neighbourhood(sorted(beyond))
            graph |= more
            timeless |= more_timeless
        activation = spread_activation(
            seeds,
            graph,
            decay=cfg.activation_decay,
            max_depth=cfg.activation_depth,
            fan_out=cfg.activation_fan_out,
        )
        answers = self._links.answers(list(seeds)) if cfg.answer_share > 0 else {}
        activation = pass_to_answers(activation, seeds, answers, cfg.answer_share)
        return _Signals(similarity, fused, activation, graph, timeless, answers, degraded)

    def _floored(
        self,
        query: str,
        scored: Sequence[tuple[RankingRow, ScoreBreakdown]],
        signals: _Signals,
        limit: int,
    ) -> list[tuple[RankingRow, ScoreBreakdown]]:
        """The best ``limit`` scored memories that pass the relevance floor (retrieval/floor.py),
        in order, each score completed with the evidence the floor read."""
        cfg = self.config
        floor = cfg.floor
        shares = self._words.shares(query, [row for row, _ in scored])
        own = {
            row.id: evidence(score.similarity, shares.get(row.id, 0.0), floor.word_weight)
            for row, score in scored
        }
        # Activation counts as evidence only when it comes from memories that passed on their own.
        seeds = {
            memory_id: signals.fused[memory_id][2]
            for memory_id, value in own.items()
            if value >= floor.floor and memory_id in signals.fused
        }
        linked = spread_activation(
            seeds,
            _floor_graph(signals, {row.id for row, _ in scored if row.speaker}),
            decay=cfg.activation_decay,
            max_depth=cfg.activation_depth,
            fan_out=cfg.activation_fan_out,
        )
        linked = pass_to_answers(linked, seeds, signals.answers, cfg.answer_share)
        allowed = passing(own, linked, floor)
        kept = [
            (row, score, score.total + word_bonus(shares.get(row.id, 0.0), cfg.weights))
            for row, score in scored
            if allowed is None or row.id in allowed
        ]
        kept.sort(key=lambda item: item[2], reverse=True)
        # Only what is returned gets its score completed: a recall ranks ~100 candidates.
        return [
            (
                row,
                replace(
                    score,
                    words=shares.get(row.id, 0.0),
                    evidence=own[row.id],
                    linked=linked.get(row.id, 0.0),
                    total=total,
                ),
            )
            for row, score, total in kept[:limit]
        ]

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
            semantic, lexical, relevance = signals.fused.get(row.id, (0.0, 0.0, 0.0))
            # From SQLite's 32-bit vector: the embedded index keeps 16-bit ones, a cosine off by
            # up to about 1e-3, enough to reorder near-duplicates.
            similarity = float(row.embedding @ query_vector)
            lesson = row.loader_type == SourceKind.SESSION_LESSON
            score = score_candidate(
                similarity,
                semantic=semantic,
                lexical=lexical,
                relevance=relevance,
                activation=signals.activation.get(row.id, 0.0),
                speaker_named=names_speaker(row.speaker, names),
                importance=row.importance_score,
                age_days=(stamp - row.timestamp) / 86_400,
                strength=effective_strength(
                    row.uses, (stamp - row.last_used) / 86_400, row.hierarchy_level, is_lesson=lesson
                ),
                is_session_lesson=lesson,
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


def _most_activated(signals: _Signals, limit: int) -> list[str]:
    """The ``limit`` memories that activation reached and neither meaning nor words found, most
    activated first: the graph work of a recall stays bounded however many links a store grows."""
    only = [memory_id for memory_id in signals.activation if memory_id not in signals.fused]
    return heapq.nlargest(limit, only, key=signals.activation.__getitem__)


def _floor_graph(signals: _Signals, turns: set[str]) -> dict[str, list[tuple[str, float]]]:
    """The links the floor follows: every kind between conversation turns; between anything else,
    all but links in time (notes stored one after another in a session are not evidence for
    each other, while a reply is evidence for the question it answers)."""
    graph: dict[str, list[tuple[str, float]]] = {}
    for source, edges in signals.graph.items():
        if source in turns:
            timeless = dict(signals.timeless.get(source, ()))
            graph[source] = [
                (t, w) if t in turns else (t, timeless[t]) for t, w in edges if t in turns or t in timeless
            ]
        elif source in signals.timeless:
            graph[source] = signals.timeless[source]
    return graph


def _explain(score: BridgeScore, anchor: str) -> str:
    snippet = " ".join(anchor.split())
    snippet = snippet if len(snippet) <= 60 else snippet[:57] + "..."
    return (
        f"Close to the core memory \u201c{snippet}\u201d (connection {score.connection_potential:.2f}) "
        f"though far from the query (novelty {score.novelty_score:.2f})"
    )
