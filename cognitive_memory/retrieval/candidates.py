"""Recall's candidates: the query as the search takes it (read before the search), the one search
of the vector index, and what the search leaves to the store of record.

A recall reads the store twice (``RecallReads.together``): ``read_query`` before the search (the
query's terms corrected against the vocabulary, the filter the index applies, under a metadata
filter (or a session filter the index cannot search) the ids of the memories that match, the
sparse vector of the words), and, after it, everything ranking needs, ``gather`` first. Where the
word counts and the filter are kept in memory (``replicas``), ``query_at_hand`` gives the query
without the first read, and the read after the search checks it (``Retriever.retrieve``).
Between the two, ``search`` makes one call to the vector index for the meaning and the words
together (``VectorStore.search_with_words``); the words come from FTS5 instead where the index
does not search them: with ``words_in_index`` off, and when the index is down.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from cognitive_memory.core.memory import Vector
from cognitive_memory.core.spelling import QueryTerms
from cognitive_memory.core.validation import check_key
from cognitive_memory.errors import InvalidInputError, StorageError
from cognitive_memory.index.sparse import SparseVector, query_stems, words_query
from cognitive_memory.index.vector_store import VectorFilter, VectorHit, VectorStore
from cognitive_memory.retrieval.reading import (
    FilterAtHand,
    FilterReads,
    MemoryReads,
    QueryAtHand,
    QueryReads,
    RankingReads,
    RecallReads,
)

__all__ = [
    "Candidates",
    "RecallQuery",
    "Search",
    "gather",
    "named_key",
    "named_keys",
    "query_at_hand",
    "read_query",
    "search",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RecallQuery:
    """A query as the search takes it: its ``terms`` (corrected against the store's vocabulary),
    ``searched`` the filter the index applies (None when every memory passes; under a metadata
    filter, or a session filter the index cannot search, the ids of the memories that match),
    ``words`` the sparse vector of its terms when the index searches the words (else None: FTS5
    does), and ``counts`` the store's memories and how many hold each of its terms (the words'
    rarity, which the index's query and the relevance floor's word shares both weigh). ``keyed``:
    the memories of the recall's projects whose key the query is as a whole (``named_key``), which
    pass the floor and rank first."""

    terms: QueryTerms
    searched: VectorFilter | None
    words: SparseVector | None
    counts: tuple[int, dict[str, int]]
    keyed: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Search:
    """What the search found: the nearest vectors, the word matches as (memory id, score) when the
    index searched the words (None: FTS5 is asked), and ``degraded`` when the index failed."""

    nearest: list[VectorHit]
    words: list[tuple[str, float]] | None
    degraded: bool = False


@dataclass(frozen=True, slots=True)
class Candidates:
    """Each candidate's cosine (``similarity``) and word score (``lexical``)."""

    similarity: dict[str, float]
    lexical: dict[str, float]


def read_query(
    filters: FilterReads,
    words: QueryReads,
    text: str,
    where: VectorFilter | None,
    words_in_index: bool,
    sessions_in_index: bool = False,
) -> RecallQuery:
    """The reads of ``text`` before the search (made inside ``RecallReads.together``); with
    ``words_in_index``, its terms weighted as the index searches them, with FTS5's IDF
    (``index/sparse.words_query``); with ``sessions_in_index``, a session filter goes to the index
    as it is (``VectorStore.has_sessions``). The memories named by key are read after the search
    (``named_keys``)."""
    searched = filters.index_filter(where, sessions_in_index=sessions_in_index)
    terms = words.query_terms(text)
    counts = words.document_counts(query_stems(terms))
    return RecallQuery(terms, searched, words_query(terms, *counts) if words_in_index else None, counts)


def query_at_hand(
    filters: FilterAtHand,
    words: QueryAtHand,
    text: str,
    where: VectorFilter | None,
    words_in_index: bool,
    sessions_in_index: bool = False,
) -> tuple[RecallQuery, int] | None:
    """``read_query`` from what is kept in memory, without reading the store, as it was when last
    caught up with the change log, and the generation of the word counts it was weighed by (the
    recall checks both after the search: ``QueryAtHand.still``); None when something must be
    read (a word to correct, a term not kept, a filter that lists ids)."""
    searched = filters.filter_at_hand(where, sessions_in_index=sessions_in_index)
    kept = words.at_hand(text) if searched is not None else None
    if searched is None or kept is None:
        return None
    terms, counts, generation = kept
    words_vector = words_query(terms, *counts) if words_in_index else None
    return RecallQuery(terms, searched[0], words_vector, counts), generation


def named_keys(memories: MemoryReads, text: str, where: VectorFilter | None) -> tuple[str, ...]:
    """The memories of ``where``'s projects whose key ``text`` is as a whole (``named_key``)."""
    key = named_key(text)
    return tuple(memories.keyed_ids(key, where.projects if where else ())) if key else ()


def named_key(text: str) -> str | None:
    """The key a query is as a whole (case, width and accents folded as keys are, surrounding
    spaces dropped: ``check_key``), or None when no key is written so (spaces inside, ...)."""
    try:
        return check_key(text)
    except InvalidInputError:
        return None


def search(vectors: VectorStore, query: RecallQuery, vector: Vector, pool: int) -> Search:
    """The ``pool`` nearest vectors, and the ``pool`` best word matches when the index holds the
    words, in one call to the index. When the index fails, nothing from it (``degraded``)."""
    try:
        if query.words is None:
            return Search(vectors.search(vector, pool, query.searched, precise=True), None)
        hits, found = vectors.search_with_words(vector, query.words, pool, query.searched, precise=True)
    except StorageError as exc:
        # The index is down: recall goes on with words alone (cosine still comes from SQLite).
        logger.warning("Vector search failed, recalling by words only: %s", exc)
        return Search([], None, degraded=True)
    return Search(hits, [(hit.id, hit.score) for hit in found])


def gather(
    records: RecallReads,
    ranking: RankingReads,
    query: RecallQuery,
    found: Search,
    vector: Vector,
    pool: int,
    min_similarity: float,
) -> Candidates:
    """The candidates of ``found``: the nearest at a cosine of at least ``min_similarity``, and the
    ``pool`` best word matches (FTS5's where the index did not search the words), each given its
    cosine from the store's 32-bit vector (read from ``ranking``)."""
    similarity = {hit.id: hit.score for hit in found.nearest if hit.score >= min_similarity}
    matches = found.words if found.words is not None else records.words.search(query.terms, pool)
    lexical = dict(matches)
    missing = [memory_id for memory_id in lexical if memory_id not in similarity]
    for memory_id, stored in ranking.vectors(missing).items():
        similarity[memory_id] = float(stored @ vector)
    return Candidates(similarity, lexical)
