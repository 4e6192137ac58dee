"""Recall as named stages: candidates, fusion, activation, ranking, the floor, the returned
records (core and peripheral) and bridges; the conversation stage adds its signals for turns."""

from __future__ import annotations

import heapq
import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial

from cognitive_memory.core.memory import BridgeMemory, SourceKind, Vector
from cognitive_memory.core.spelling import QueryTerms
from cognitive_memory.core.strength import effective_strength
from cognitive_memory.errors import StorageError
from cognitive_memory.index.sparse import query_stems, words_query
from cognitive_memory.index.vector_store import VectorFilter, VectorHit, VectorStore
from cognitive_memory.retrieval.activation import spread_activation
from cognitive_memory.retrieval.bridges import BridgeScore, score_bridges
from cognitive_memory.retrieval.conversation import ConversationStage
from cognitive_memory.retrieval.exact import nearest, session_vectors
from cognitive_memory.retrieval.floor import RelevanceFloor, evidence, passing
from cognitive_memory.retrieval.fusion import fuse
from cognitive_memory.retrieval.reading import RecallReads
from cognitive_memory.retrieval.results import RankedMemory, RetrievalResult, split_core
from cognitive_memory.retrieval.scoring import RankWeights, ScoreBreakdown, score_candidate, word_bonus
from cognitive_memory.retrieval.succession import successors_first
from cognitive_memory.storage.associations import Graph
from cognitive_memory.storage.ranking import RankingRow

__all__ = ["WORDS_BESIDE_FROM", "RetrievalConfig", "Retriever", "WordMatches"]

logger = logging.getLogger(__name__)

# In a store of more memories than this, recall searches the words on another thread while the
# query is embedded on one; below it, BM25 costs less than a thread (docs/performance.md).
WORDS_BESIDE_FROM = 5_000


@dataclass(frozen=True, slots=True)
class RetrievalConfig:
    """Knobs of recall; the defaults are documented in docs/recall.md and measured by bench/.
    ``conversation`` turns on the conversation stage (retrieval/conversation.py): off, turns rank
    as any memory. ``words_in_index`` (on) searches the words as sparse vectors in the vector
    index, in the same call as the meaning (``index/sparse.py``), and reads nothing of SQLite FTS5:
    the words' rarity comes from the document frequencies kept beside the vocabulary. Off, or when
    the index fails, or under a session filter (whose meaning is searched exactly in SQLite),
    FTS5 searches the words."""

    candidate_pool: int = 50
    semantic_weight: float = 0.5
    min_similarity: float = 0.1
    activation_decay: float = 0.2
    activation_depth: int = 1
    activation_fan_out: int = 8
    activation_pool: int = 10
    answer_share: float = 0.4
    conversation: bool = True
    core_ratio: float = 0.8
    bridge_threshold: float = 0.5
    bridge_limit: int = 3
    bridge_anchors: int = 3
    bridge_neighbours: int = 10
    weights: RankWeights = field(default_factory=RankWeights)
    floor: RelevanceFloor = field(default_factory=RelevanceFloor)
    words_in_index: bool = True


@dataclass(frozen=True, slots=True)
class _Candidates:
    """What the searches found: each candidate's cosine and BM25 score (``degraded`` when the
    vector index failed and words alone found them)."""

    similarity: dict[str, float]
    lexical: dict[str, float]
    degraded: bool
    terms: QueryTerms


@dataclass(frozen=True, slots=True)
class _Activation:
    """What the links give: the activation each memory received, and the graph it spread over
    (``graph``, every kind of link; ``timeless``, the same without links in time)."""

    received: dict[str, float]
    graph: Graph
    timeless: Graph


Fused = dict[str, tuple[float, float, float]]
# A query's terms (corrected against the store's vocabulary) and their best word matches.
WordMatches = tuple[QueryTerms, list[tuple[str, float]]]
Scored = list[tuple[RankingRow, ScoreBreakdown]]


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
        words: Future[WordMatches] | None = None,
    ) -> RetrievalResult:
        """Recall's stages, in order (docs/recall.md#how-recall-works): candidates from meaning and
        words, their fusion, activation over links, ranking on light rows, the relevance floor, the
        returned records (core and peripheral), bridges. The conversation stage
        (``retrieval/conversation.py``) adds its signals for turns at activation, ranking and the
        floor. ``words``, when given, is the word search of ``words_beside`` under way beside the
        query's embedding; otherwise the words are searched here."""
        searched = self._memories.index_filter(where)
        session = session_vectors(self._memories, where)
        found = self._candidates(query, query_vector, self.pool_size(max_results), searched, words, session)
        fused = fuse(found.similarity, found.lexical, self.config.semantic_weight)
        conversation = self._conversation(query, fused)
        activation = self._activation(fused, conversation)
        rows = self._rows(fused, activation, where)
        scored = self._ranking(rows, fused, activation, conversation, query_vector, now)
        best = self._floor(found.terms, scored, fused, activation, conversation, max_results)
        core, peripheral = self._returned(best)
        room = self.config.bridge_limit if max_total is None else max_total - len(core) - len(peripheral)
        wanted = include_bridges and not found.degraded and room > 0
        bridges = self._bridges(query_vector, core, peripheral, searched, session)[:room] if wanted else []
        return RetrievalResult(query, core, peripheral, bridges, found.degraded)

    def pool_size(self, max_results: int) -> int:
        """How many candidates each search (meaning, words) offers for ``max_results``."""
        return max(self.config.candidate_pool, max_results * 3)

    def words_beside(self, query: str, max_results: int) -> Callable[[], WordMatches] | None:
        """The word search ``retrieve`` makes for ``query``, as work to run on another thread while
        the query is embedded (``QueryEncoder.embed_query``), in a store where that pays: one of
        more than WORDS_BESIDE_FROM memories. None in a smaller one: ``retrieve`` searches itself."""
        if self.config.words_in_index or not self.words_beside_pays():
            return None
        return partial(self._search_words, query, self.pool_size(max_results))

    def _search_words(self, query: str, pool: int) -> WordMatches:
        """The query's terms, corrected against the store's vocabulary, and their ``pool`` best
        word matches."""
        terms = self._words.query_terms(query)
        return terms, self._words.search(terms, pool)

    def words_beside_pays(self) -> bool:
        """True when the store is large enough for its word search to pay for a thread of its own."""
        return self._words.row_total() > WORDS_BESIDE_FROM

    def _candidates(
        self,
        query: str,
        query_vector: Vector,
        pool: int,
        where: VectorFilter | None,
        words: Future[WordMatches] | None,
        session: dict[str, Vector] | None = None,
    ) -> _Candidates:
        """Candidates: the ``pool`` nearest vectors (cosine >= min_similarity; of ``session``'s
        when given) and the ``pool`` best word matches, each given its cosine from SQLite's vector.
        With ``words_in_index`` and no session, one call to the index finds both."""
        matched: WordMatches | None = None
        try:
            if self.config.words_in_index and session is None:
                hits, matched = self._near_and_words(query, query_vector, pool, where)
            else:
                hits = self._near(query_vector, pool, where, session, precise=True)
            degraded = False
        except StorageError as exc:
            # The index is down: recall goes on with words alone (cosine still comes from SQLite).
            logger.warning("Vector search failed, recalling by words only: %s", exc)
            hits, degraded = [], True
        similarity = {hit.id: hit.score for hit in hits if hit.score >= self.config.min_similarity}
        if matched is None:
            matched = self._search_words(query, pool) if words is None else words.result()
        terms, matches = matched
        lexical = dict(matches)
        missing = [memory_id for memory_id in lexical if memory_id not in similarity]
        for memory_id, vector in self._memories.vectors(missing).items():
            similarity[memory_id] = float(vector @ query_vector)
        return _Candidates(similarity, lexical, degraded, terms)

    def _near_and_words(
        self, query: str, query_vector: Vector, pool: int, where: VectorFilter | None
    ) -> tuple[list[VectorHit], WordMatches]:
        """The ``pool`` nearest vectors and the ``pool`` best word matches of the query's terms
        (corrected, each weight a factor on its term, IDF as FTS5's), from one call to the index."""
        terms = self._words.query_terms(query)
        query_words = words_query(terms, *self._words.document_counts(query_stems(terms)))
        hits, found = self._vectors.search_with_words(query_vector, query_words, pool, where, precise=True)
        return hits, (terms, [(hit.id, hit.score) for hit in found])

    def _near(
        self,
        vector: Vector,
        limit: int,
        where: VectorFilter | None,
        session: dict[str, Vector] | None,
        *,
        precise: bool = False,
    ) -> list[VectorHit]:
        """The ``limit`` nearest vectors: among ``session``'s (exactly) when given, else the index's."""
        if session is not None:
            return nearest(session, vector, limit)
        return self._vectors.search(vector, limit, where, precise=precise)

    def _spread(
        self, seeds: Mapping[str, float], graph: Mapping[str, Sequence[tuple[str, float]]]
    ) -> dict[str, float]:
        """Activation spread from ``seeds`` over ``graph`` as the configuration says."""
        cfg = self.config
        depth, fan_out = cfg.activation_depth, cfg.activation_fan_out
        return spread_activation(seeds, graph, decay=cfg.activation_decay, max_depth=depth, fan_out=fan_out)

    def _conversation(self, query: str, fused: Fused) -> ConversationStage:
        """The conversation stage of this recall (``retrieval/conversation.py``), or none."""
        if not self.config.conversation:
            return ConversationStage.off()
        return ConversationStage.read(query, fused, self._links, self.config.answer_share)

    def _activation(self, fused: Fused, conversation: ConversationStage) -> _Activation:
        """Activation: each candidate's relevance spread over its links (and a question's passed to
        its answer)."""
        cfg = self.config
        seeds = {memory_id: parts[2] for memory_id, parts in fused.items()}
        graph, timeless = self._links.neighbourhood(list(seeds))
        if cfg.activation_depth > 1:
            beyond = {n for edges in graph.values() for n, _ in edges} - graph.keys()
            more, more_timeless = self._links.neighbourhood(sorted(beyond))
            graph |= more
            timeless |= more_timeless
        received = self._spread(seeds, graph)
        return _Activation(conversation.answered(received, seeds), graph, timeless)

    def _rows(self, fused: Fused, activation: _Activation, where: VectorFilter | None) -> list[RankingRow]:
        """Light rows of the candidates and of the most activated memories (whole memories are read
        only for what is returned), kept to ``where``."""
        reached = [*fused, *_most_activated(fused, activation.received, self.config.activation_pool)]
        rows = self._memories.ranking_rows(reached)
        if where is None or where.is_empty():
            return rows
        # Words and links reach memories the vector filter never saw: the same rule applies.
        return [row for row in rows if where.matches(row.payload(with_tags=bool(where.tags)))]

    def _ranking(
        self,
        rows: Sequence[RankingRow],
        fused: Fused,
        activation: _Activation,
        conversation: ConversationStage,
        query_vector: Vector,
        now: datetime,
    ) -> Scored:
        """Ranking: each row scored (retrieval/scoring.py), best first."""
        weights = self.config.weights
        stamp = now.timestamp()
        scored = []
        for row in rows:
            semantic, lexical, relevance = fused.get(row.id, (0.0, 0.0, 0.0))
            # From SQLite's 32-bit vector: the embedded index keeps 16-bit ones, a cosine off by
            # up to about 1e-3, enough to reorder near-duplicates.
            similarity = float(row.embedding @ query_vector)
            lesson = row.loader_type == SourceKind.SESSION_LESSON
            score = score_candidate(
                similarity,
                semantic=semantic,
                lexical=lexical,
                relevance=relevance,
                activation=activation.received.get(row.id, 0.0),
                speaker_named=conversation.speaker_named(row),
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

    def _floor(
        self,
        terms: QueryTerms,
        scored: Scored,
        fused: Fused,
        activation: _Activation,
        conversation: ConversationStage,
        limit: int,
    ) -> Scored:
        """The relevance floor: the best ``limit`` scored memories that pass it
        (retrieval/floor.py), in order, each score completed with the evidence the floor read."""
        cfg = self.config
        shares = self._words.shares(terms, [row for row, _ in scored])
        own = {
            row.id: evidence(score.similarity, shares.get(row.id, 0.0), cfg.floor.word_weight)
            for row, score in scored
        }
        linked = self._linked(scored, own, fused, activation, conversation)
        allowed = passing(own, linked, cfg.floor)
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

    def _linked(
        self,
        scored: Scored,
        own: dict[str, float],
        fused: Fused,
        activation: _Activation,
        conversation: ConversationStage,
    ) -> dict[str, float]:
        """The activation each memory receives at the floor. It counts as evidence only when it
        comes from memories that passed on their own."""
        cfg = self.config
        seeds = {
            memory_id: fused[memory_id][2]
            for memory_id, value in own.items()
            if value >= cfg.floor.floor and memory_id in fused
        }
        graph = conversation.floor_graph(activation.graph, activation.timeless, (row for row, _ in scored))
        linked = self._spread(seeds, graph)
        return conversation.answered(linked, seeds)

    def _returned(self, best: Scored) -> tuple[list[RankedMemory], list[RankedMemory]]:
        """Returned records: whole memories for the best rows, each moved after the memories that
        supersede it, split into core and peripheral."""
        ids = [row.id for row, _ in best]
        successors = self._links.superseded_by(ids)
        scores = {row.id: score for row, score in best}
        by_id = {m.id: m for m in self._memories.get(ids)}
        order = [memory_id for memory_id in successors_first(ids, successors) if memory_id in by_id]
        ranked = [
            RankedMemory(by_id[memory_id], scores[memory_id], rank, tuple(successors.get(memory_id, ())))
            for rank, memory_id in enumerate(order, start=1)
        ]
        floor = self.config.floor
        cut = split_core(ranked, self.config.core_ratio, floor.core if floor.enabled else None)
        return ranked[:cut], ranked[cut:]

    def _bridges(
        self,
        query_vector: Vector,
        core: Sequence[RankedMemory],
        peripheral: Sequence[RankedMemory],
        where: VectorFilter | None,
        session: dict[str, Vector] | None = None,
    ) -> list[BridgeMemory]:
        """Bridges: vector neighbours of the leading core memories (in ``session``'s, when given),
        far from the query and close to a core memory (retrieval/bridges.py), none of them already
        returned."""
        taken = {r.memory.id for r in (*core, *peripheral)}
        anchors = {
            r.memory.id: r.memory.cognitive_embedding
            for r in core[: self.config.bridge_anchors]
            if r.memory.cognitive_embedding is not None
        }
        limit = self.config.bridge_neighbours + len(taken)
        hits = [hit.id for vector in anchors.values() for hit in self._near(vector, limit, where, session)]
        candidates = self._memories.vectors([i for i in dict.fromkeys(hits) if i not in taken])
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


def _most_activated(fused: Fused, received: dict[str, float], limit: int) -> list[str]:
    """The ``limit`` memories that activation reached and neither meaning nor words found, most
    activated first: the graph work of a recall stays bounded however many links a store grows."""
    only = [memory_id for memory_id in received if memory_id not in fused]
    return heapq.nlargest(limit, only, key=received.__getitem__)


def _explain(score: BridgeScore, anchor: str) -> str:
    snippet = " ".join(anchor.split())
    snippet = snippet if len(snippet) <= 60 else snippet[:57] + "..."
    return (
        f"Close to the core memory \u201c{snippet}\u201d (connection {score.connection_potential:.2f}) "
        f"though far from the query (novelty {score.novelty_score:.2f})"
    )
