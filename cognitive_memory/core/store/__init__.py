"""The store of record's seam: one protocol per aggregate (memories, versions, links, words,
sources, trash, ...), gathered by ``StoreOfRecord``, and the values they take and give. The system
and the use cases depend on these only; ``storage/`` holds the SQLite implementation, and a
second store of record (PostgreSQL, issue #46) would be another. Recall reads narrower slices of
the same aggregates (``reads.py``, gathered by ``retrieval/reading.RecallReads``)."""

from cognitive_memory.core.store.aggregates import (
    ChangeRecords,
    Confirm,
    DamagedRecords,
    DuplicateRecords,
    IndexedWordRecords,
    OutboxRecords,
    PropertyRecords,
    SourceRecords,
    TrashRecords,
    WordDocumentRecords,
)
from cognitive_memory.core.store.memories import LinkRecords, MemoryRecords, VersionRecords, WordRecords
from cognitive_memory.core.store.reads import LinkReads, MemoryReads, RankingReads, WordReads
from cognitive_memory.core.store.store_of_record import StoreOfRecord

__all__ = [
    "ChangeRecords",
    "Confirm",
    "DamagedRecords",
    "DuplicateRecords",
    "IndexedWordRecords",
    "LinkReads",
    "LinkRecords",
    "MemoryReads",
    "MemoryRecords",
    "OutboxRecords",
    "PropertyRecords",
    "RankingReads",
    "SourceRecords",
    "StoreOfRecord",
    "TrashRecords",
    "VersionRecords",
    "WordDocumentRecords",
    "WordReads",
    "WordRecords",
]
