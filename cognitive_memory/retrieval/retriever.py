"""Recall as named stages: candidates, fusion, activation, ranking, the floor, the returned
records (core and peripheral) and bridges; the conversation stage adds its signals for turns."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial

from cognitive_memory.core.links import Graph
from cognitive_memory.core.memory import BridgeMemory, SourceKind, Vector
from cognitive_memory.core.ranking import RankingRow, tags_as_words
from cognitive_memory.core.strength import effective_strength
from cognitive_memory.errors import StorageError
from cognitive_memory.index.coverage import IndexCoverage
from cognitive_memory.index.vector_store import VectorFilter, VectorStore
from cognitive_memory.retrieval.activation import spread_activation
from cognitive_memory.retrieval.bridging import Bridging
from cognitive_memory.retrieval.candidates import (
    RecallQuery,
    Search,
    gather,
    named_keys,
    query_at_hand,
    read_query,
    search,
)
from cognitive_memory.retrieval.conversation import ConversationStage
from cognitive_memory.retrieval.explaining import FloorPass, Kept, explain, with_bridges
from cognitive_memory.retrieval.floor import RelevanceFloor, evidence, passing
from cognitive_memory.retrieval.fusion import fuse
from cognitive_memory.retrieval.reading import (
    FilterAtHand,
    FilterReads,
    LinkReads,
    QueryAtHand,
    QueryReads,
    RankingReads,
    RecallReads,
)
from cognitive_memory.retrieval.results import Explanation, RankedMemory, RetrievalResult, split_core
from cognitive_memory.retrieval.scoring import (
    RankWeights,
    ScoreBreakdown,
    key_lift,
    score_candidate,
    word_bonus,
)
from cognitive_memory.retrieval.succession import successors_first

__all__ = ["RetrievalConfig", "Retriever"]


@dataclass(frozen=True, slots=True)
class RetrievalConfig:
    """Knobs of recall; the defaults are documented in docs/recall.md and measured by bench/.
    ``conversation`` turns on the conversation stage (retrieval/conversation.py): off, turns rank
    as any memory. ``words_in_index`` (on) searches the words as sparse vectors in the vector
    index, in the same call as the meaning (``index/sparse.py``), and reads nothing of SQLite FTS5:
    the words' rarity comes from the document frequencies kept beside the vocabulary. Off, or when
    the index fails, or while an older store's words are still being built into the index
    (``replicas/index_words.py``), FTS5 searches the words."""

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
class _Activation:
    """What the links give: the activation each memory received, and the graph it spread over
    (``graph``, every kind of link; ``timeless``, the same without links in time)."""

    received: dict[str, float]
    graph: Graph
    timeless: Graph


Fused = dict[str, tuple[float, float, float]]
Scored = list[tuple[RankingRow, ScoreBreakdown]]
_Ranked = tuple[list[RankedMemory], list[RankedMemory], list[Explanation]]


class Retriever:
    """Finds and ranks memories for a query."""

    def __init__(
        self,
        records: RecallReads,
        vectors: VectorStore,
        config: RetrievalConfig,
        coverage: IndexCoverage | None = None,
        links: LinkReads | None = None,
        ranking: RankingReads | None = None,
        at_hand: tuple[FilterAtHand, QueryAtHand] | None = None,
    ) -> None:
        """``links``: where the links are read, ``ranking``: where the candidates' ranking rows and
        vectors are (both kept in memory by ``replicas``), else the store's. ``at_hand``: the
        filter and the query's word counts kept in memory, which let the search come before any
        read of the store (``query_at_hand``)."""
        self._records = records
        self._memories = records.memories
        self._links = links or records.links
        self._ranking_reads = ranking or records.memories
        self._words = records.words
        self._at_hand = at_hand
        self._filters: FilterReads = at_hand[0] if at_hand else records.memories
        self._query_words: QueryReads = at_hand[1] if at_hand else records.words
        self._vectors = vectors
        self.config = config
        self.coverage = coverage  # None: the index is taken to hold every memory

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
        explain: Sequence[str] = (),
    ) -> RetrievalResult:
        """Recall's stages, in order (docs/recall.md#how-recall-works): the query read, one search of
        the vector index, then in one read of the store the candidates, their fusion, activation
        over links, ranking on light rows, the relevance floor and the returned records (core and
        peripheral); bridges last, in the same read, after one more search. The conversation stage
        (``retrieval/conversation.py``) adds its signals for turns at activation, ranking and the
        floor. ``explain``: ids of memories to explain (``retrieval/explaining.py``), read in one
        more read of the store; they change nothing else. Where the query's reads are kept in
        memory (``at_hand``), the search comes first and the read after it checks the query
        against the store: when the store changed what the query was weighed by, the query is
        read again there and the search made again."""
        pool = self.pool_size(max_results)
        # An index short of memories (lost files, an older copy) leaves the words to FTS5, which
        # holds them all: what the index lacks is still found, by its words.
        shortfall = self.coverage.shortfall() if self.coverage is not None else None
        sessions = where is not None and bool(where.sessions) and self.sessions_from_index()

        def read() -> RecallQuery:
            in_index = shortfall is None and self.words_from_index()
            return read_query(self._filters, self._query_words, query, where, in_index, sessions)

        kept = self._query_at_hand(query, where, shortfall is None, sessions)
        asked = kept[0] if kept else self._records.together(read)
        found = search(self._vectors, asked, query_vector, pool)
        checked = partial(self._checked, read, where, sessions, kept[1], query_vector, pool) if kept else None

        def after_search() -> tuple[RecallQuery, Search, _Ranked, list[BridgeMemory]]:
            """Inside the one read after the search: the query checked (when it was not read from
            the store), the memories it names by key, then every stage, bridges last."""
            settled, hits = checked(asked, found) if checked else (asked, found)
            settled = replace(settled, keyed=named_keys(self._memories, query, where))
            ranked = self._ranked(query, settled, hits, query_vector, now, max_results, where, explain)
            core, peripheral = ranked[0], ranked[1]
            room = self.config.bridge_limit if max_total is None else max_total - len(core) - len(peripheral)
            wanted = include_bridges and not hits.degraded and room > 0
            near = self._bridging().find(query_vector, core, peripheral, settled.searched) if wanted else []
            return settled, hits, ranked, near[:room]

        asked, found, (core, peripheral, explained), bridges = self._records.together(after_search)
        explained = with_bridges(explained, [b.memory.id for b in bridges])
        return RetrievalResult(query, core, peripheral, bridges, found.degraded, shortfall, explained)

    def _query_at_hand(
        self, query: str, where: VectorFilter | None, whole_index: bool, sessions: bool
    ) -> tuple[RecallQuery, int] | None:
        """The query as ``read_query`` gives it, from what is kept in memory, with the generation
        of its word counts (``query_at_hand``), or None."""
        if self._at_hand is None:
            return None
        return query_at_hand(*self._at_hand, query, where, whole_index and self.words_from_index(), sessions)

    def _checked(
        self,
        read: Callable[[], RecallQuery],
        where: VectorFilter | None,
        sessions: bool,
        generation: int,
        query_vector: Vector,
        pool: int,
        asked: RecallQuery,
        found: Search,
    ) -> tuple[RecallQuery, Search]:
        """``asked`` and what it found, checked inside the read after the search, the state kept
        in memory caught up with the change log: unchanged when the word counts are still of
        ``generation`` and the filter is the same; else the query read again, and searched again
        when the store changed it."""
        assert self._at_hand is not None
        filters, words = self._at_hand
        if (
            words.still(generation)
            and filters.index_filter(where, sessions_in_index=sessions) == asked.searched
        ):
            return asked, found
        fresh = read()
        return (asked, found) if fresh == asked else (fresh, search(self._vectors, fresh, query_vector, pool))

    def _bridging(self) -> Bridging:
        """How this recall finds bridges (``bridging.py``), by the configuration as it is now."""
        cfg = self.config
        return Bridging(
            self._vectors,
            self._memories,
            self._ranking_reads,
            self._records.together,
            cfg.bridge_anchors,
            cfg.bridge_neighbours,
            cfg.bridge_threshold,
            cfg.bridge_limit,
        )

    def words_from_index(self) -> bool:
        """Whether recall searches the words in the vector index: ``words_in_index`` is on and the
        index holds every memory's words (FTS5 answers while an older store's are built)."""
        return self.config.words_in_index and self._records.words.in_index()

    def sessions_from_index(self) -> bool:
        """Whether the index searches a session filter itself (``VectorStore.has_sessions``):
        else SQLite lists the ids of the session's latest memories (``SESSION_SCAN``), as for an
        index made before the session was in its payload, or one that does not answer."""
        try:
            return self._vectors.has_sessions()
        except StorageError:
            return False

    def pool_size(self, max_results: int) -> int:
        """How many candidates each search (meaning, words) offers for ``max_results``."""
        return max(self.config.candidate_pool, max_results * 3)

    def _ranked(
        self,
        query: str,
        asked: RecallQuery,
        found: Search,
        query_vector: Vector,
        now: datetime,
        max_results: int,
        where: VectorFilter | None,
        explain_ids: Sequence[str] = (),
    ) -> _Ranked:
        """The stages after the search, made inside one read of the store: the core and peripheral
        memories, and the explanations of ``explain_ids``."""
        cfg = self.config
        pool = self.pool_size(max_results)
        candidates = gather(
            self._records, self._ranking_reads, asked, found, query_vector, pool, cfg.min_similarity
        )
        fused = fuse(candidates.similarity, candidates.lexical, cfg.semantic_weight)
        conversation = self._conversation(query, fused)
        activation = self._activation(fused, conversation)
        rows = self._rows(fused, activation, where, asked.searched, asked.keyed)
        scored = self._ranking(rows, fused, activation, conversation, query_vector, now)
        floor_pass = self._floor(asked, scored, fused, activation, conversation)
        core, peripheral = self._returned(self._best(floor_pass, max_results))
        if not explain_ids:
            return core, peripheral, []
        named = self._named(
            explain_ids, asked, fused, activation, conversation, query_vector, now, floor_pass
        )
        returned = {
            r.memory.id: (kind, r) for kind, rs in (("core", core), ("peripheral", peripheral)) for r in rs
        }
        explained = explain(explain_ids, named, returned, floor_pass, where, cfg.floor)
        return core, peripheral, explained

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

    def _rows(
        self,
        fused: Fused,
        activation: _Activation,
        where: VectorFilter | None,
        searched: VectorFilter | None,
        keyed: Sequence[str] = (),
    ) -> list[RankingRow]:
        """Light rows of the candidates, of the most activated memories and of those the query
        names by their key (``keyed``) (whole memories are read only for what is returned), kept
        to ``where`` (its metadata pairs: to the ids ``searched`` lists, the memories SQLite found
        holding them)."""
        reached = [*fused, *_most_activated(fused, activation.received, self.config.activation_pool)]
        reached += [memory_id for memory_id in keyed if memory_id not in fused and memory_id not in reached]
        rows = self._ranking_reads.ranking_rows(reached)
        if where is None or where.is_empty():
            return rows
        if where.metadata and searched is not None and searched.ids is not None:
            listed = frozenset(searched.ids)
            rows = [row for row in rows if row.id in listed]
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
        asked: RecallQuery,
        scored: Scored,
        fused: Fused,
        activation: _Activation,
        conversation: ConversationStage,
    ) -> FloorPass:
        """The relevance floor (retrieval/floor.py): what it read of each scored memory, and those
        that pass it, best first."""
        cfg = self.config
        shares = self._words.shares(asked.terms, tags_as_words([row for row, _ in scored]), asked.counts)
        own = {
            row.id: evidence(score.similarity, shares.get(row.id, 0.0), cfg.floor.word_weight)
            for row, score in scored
        }
        linked = self._linked(scored, own, fused, activation, conversation)
        named = [row.id for row, _ in scored if row.id in asked.keyed]
        allowed = passing(own, linked, cfg.floor, named)
        kept = [
            (row, score, score.total + word_bonus(shares.get(row.id, 0.0), cfg.weights))
            for row, score in scored
            if allowed is None or row.id in allowed
        ]
        kept = _named_first(kept, frozenset(named), cfg.weights) if named else kept
        kept.sort(key=lambda item: item[2], reverse=True)
        return FloorPass(shares, own, linked, allowed, kept)

    def _best(self, floor_pass: FloorPass, limit: int) -> Scored:
        """The best ``limit`` memories that passed the floor, in order, each score completed with
        the evidence the floor read (only what is returned: a recall ranks ~100 candidates)."""
        return [
            (
                row,
                score._replace(
                    words=floor_pass.shares.get(row.id, 0.0),
                    evidence=floor_pass.own[row.id],
                    linked=floor_pass.linked.get(row.id, 0.0),
                    total=total,
                ),
            )
            for row, score, total in floor_pass.kept[:limit]
        ]

    def _named(
        self,
        ids: Sequence[str],
        asked: RecallQuery,
        fused: Fused,
        activation: _Activation,
        conversation: ConversationStage,
        query_vector: Vector,
        now: datetime,
        floor_pass: FloorPass,
    ) -> dict[str, tuple[RankingRow, ScoreBreakdown]]:
        """The memories named for ``explain`` (read whether or not the search found them, past
        every filter), each scored for the query as ranking and the floor score a candidate."""
        cfg = self.config
        rows = self._memories.ranking_rows(list(dict.fromkeys(ids)))
        shares = self._words.shares(asked.terms, tags_as_words(rows), asked.counts)
        named = {}
        for row, score in self._ranking(rows, fused, activation, conversation, query_vector, now):
            share = shares.get(row.id, 0.0)
            named[row.id] = (
                row,
                score._replace(
                    words=share,
                    evidence=evidence(score.similarity, share, cfg.floor.word_weight),
                    linked=floor_pass.linked.get(row.id, 0.0),
                    total=score.total + word_bonus(share, cfg.weights),
                ),
            )
        return named

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


def _named_first(kept: Kept, named: frozenset[str], weights: RankWeights) -> Kept:
    """``kept`` with each memory the query names by its key lifted above every other one
    (``scoring.key_lift``), the lift kept in its score."""
    best = max((total for row, _, total in kept if row.id not in named), default=0.0)
    lifted = []
    for row, score, total in kept:
        lift = key_lift(total, best, weights) if row.id in named else 0.0
        lifted.append((row, score._replace(key=lift), total + lift) if lift else (row, score, total))
    return lifted


def _most_activated(fused: Fused, received: dict[str, float], limit: int) -> list[str]:
    """The ``limit`` memories that activation reached and neither meaning nor words found, most
    activated first: the graph work of a recall stays bounded however many links a store grows."""
    only = [memory_id for memory_id in received if memory_id not in fused]
    return heapq.nlargest(limit, only, key=received.__getitem__)
