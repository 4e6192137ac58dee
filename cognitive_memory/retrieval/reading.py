"""What recall reads from the store of record: narrow protocols, so ranking depends on no one
store. The slices are the core's (``core/store/reads.py``), narrowings of its store-of-record
protocols (``core/store``); ``storage.SQLiteMemoryStore`` is the implementation, a second store
of record would be another."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from cognitive_memory.core.store.reads import LinkReads, MemoryReads, RankingReads, WordReads

__all__ = ["LinkReads", "MemoryReads", "RankingReads", "RecallReads", "WordReads"]

T = TypeVar("T")


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
        read of the store (one transaction: one snapshot): recall reads the store twice, once
        before its search and once after (docs/recall.md#how-recall-works)."""
        ...
