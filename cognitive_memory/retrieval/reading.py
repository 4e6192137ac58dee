"""What recall reads from the store of record: narrow protocols, so ranking depends on no one
store. The slices are the core's (``core/store/reads.py``), narrowings of its store-of-record
protocols (``core/store``); ``storage.SQLiteMemoryStore`` is the implementation, a second store
of record would be another. Beside them, what a serving process keeps in memory may also answer
without reading the store (``QueryAtHand``, ``FilterAtHand``: ``replicas``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from cognitive_memory.core.spelling import QueryTerms
from cognitive_memory.core.store.reads import FilterReads, LinkReads, MemoryReads, RankingReads, WordReads
from cognitive_memory.core.vector_filter import VectorFilter

__all__ = [
    "FilterAtHand",
    "FilterReads",
    "LinkReads",
    "MemoryReads",
    "QueryAtHand",
    "QueryReads",
    "RankingReads",
    "RecallReads",
    "WordReads",
]

T = TypeVar("T")


class QueryReads(Protocol):
    """What a recall reads to weigh its query's words before its search (``WordReads`` has them;
    ``replicas.FollowedWords`` keeps them in memory)."""

    def query_terms(self, text: str) -> QueryTerms:
        """The text's words with their corrections (``WordReads.query_terms``)."""
        ...

    def document_counts(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """(memories in the store, how many hold each of ``terms``: ``WordReads.document_counts``)."""
        ...


class QueryAtHand(QueryReads, Protocol):
    """``QueryReads`` kept in memory, which may also answer without reading the store."""

    def at_hand(self, text: str) -> tuple[QueryTerms, tuple[int, dict[str, int]], int] | None:
        """``query_terms`` of ``text`` and ``document_counts`` of its terms as last read, and the
        generation of the counts they come from, without reading the store (they may be behind
        it: recall checks them after its search, ``still``); None when they are not all kept."""
        ...

    def still(self, generation: int) -> bool:
        """Inside a read of the store: whether the counts, caught up with it, are still those of
        ``generation`` (so ``query_terms`` and ``document_counts`` give what ``at_hand`` gave)."""
        ...


class FilterAtHand(FilterReads, Protocol):
    """``FilterReads`` kept in memory, which may also answer without reading the store."""

    def filter_at_hand(
        self, where: VectorFilter | None, *, sessions_in_index: bool = False
    ) -> tuple[VectorFilter | None] | None:
        """``index_filter`` as last read, in a tuple, without reading the store (it may be behind
        it: recall checks it after its search); None when it cannot tell without a read."""
        ...


class RecallReads(Protocol):
    """The store of record as recall reads it."""

    @property
    def memories(self) -> MemoryReads: ...

    @property
    def links(self) -> LinkReads: ...

    @property
    def words(self) -> WordReads: ...

    def together(self, work: Callable[[], T]) -> T:
        """What ``work`` returns, its reads of ``memories``, ``links`` and ``words`` made as one
        read of the store (one transaction: one snapshot): recall reads the store once after its
        search, and once before it unless what it weighs its query by is kept in memory
        (docs/recall.md#how-recall-works)."""
        ...
