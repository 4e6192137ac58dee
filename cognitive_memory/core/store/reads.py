"""What recall reads of the store of record: the narrow slices of the memories, the links and the
words that ranking depends on (``retrieval/reading.py`` gathers them as ``RecallReads``); the
aggregates of ``aggregates.py`` widen them with what the system and the use cases need."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from cognitive_memory.core.links import Graph
from cognitive_memory.core.memory import CognitiveMemory, Vector
from cognitive_memory.core.ranking import RankingRow
from cognitive_memory.core.spelling import QueryTerms
from cognitive_memory.core.vector_filter import VectorFilter

__all__ = ["FilterReads", "LinkReads", "MemoryReads", "RankingReads", "WordReads"]


class RankingReads(Protocol):
    """What recall reads of each candidate it ranks: its light row, its vector."""

    def vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        """The stored vectors of these ids."""
        ...

    def ranking_rows(self, ids: Sequence[str]) -> list[RankingRow]:
        """The few fields ranking needs, for many candidates at once."""
        ...


class FilterReads(Protocol):
    """How a recall's filter is given to the vector index."""

    def index_filter(
        self, where: VectorFilter | None, *, sessions_in_index: bool = False
    ) -> VectorFilter | None:
        """``where`` as the vector index needs it (None when every memory passes it; under a
        metadata filter, or a session filter the index cannot search (``sessions_in_index``
        False), the ids of the memories that match it)."""
        ...


class MemoryReads(RankingReads, FilterReads, Protocol):
    """The memories recall ranks and returns."""

    def get(self, ids: Sequence[str]) -> list[CognitiveMemory]:
        """The memories with these ids, in the order given (unknown ids are skipped)."""
        ...

    def keyed_ids(self, key: str, projects: Sequence[str]) -> list[str]:
        """The ids of the memories holding ``key``, of ``projects`` (of every project: none)."""
        ...


class LinkReads(Protocol):
    """The links activation spreads over, and the links that change a ranking."""

    def neighbourhood(self, ids: Sequence[str]) -> tuple[Graph, Graph]:
        """Each id's neighbours over every edge kind, and the same without links in time."""
        ...

    def answers(self, ids: Sequence[str]) -> dict[str, str]:
        """For each question turn among ``ids``, the turn that answers it."""
        ...

    def superseded_by(self, ids: Sequence[str]) -> dict[str, list[str]]:
        """For each of ``ids`` that other memories supersede, their ids."""
        ...


class WordReads(Protocol):
    """The store's words: the query's terms, the FTS5 word search, and the word statistics
    (``document_counts``, ``shares``), which read small tables, never FTS5."""

    def query_terms(self, text: str) -> QueryTerms:
        """The text's words as (term, weight) pairs per word, each misspelt word with its
        corrections from the store's vocabulary (``core/spelling.py``)."""
        ...

    def search(self, query: QueryTerms, limit: int) -> list[tuple[str, float]]:
        """The ``limit`` best word matches of the query's terms as (memory id, score), best first."""
        ...

    def shares(
        self,
        query: QueryTerms,
        rows: Sequence[RankingRow],
        counts: tuple[int, Mapping[str, int]] | None = None,
    ) -> dict[str, float]:
        """Each memory's share of the query's words, weighted by rarity (``counts``: the
        ``document_counts`` of the query's terms, when already read)."""
        ...

    def document_counts(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """(memories in the store, how many hold each of ``terms``, in their own text or their
        neighbours')."""
        ...

    def in_index(self) -> bool:
        """True when the vector index holds every memory's words (a cheap, cached look)."""
        ...
