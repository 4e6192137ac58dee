"""The store of record as the system and the use cases see it: one protocol gathering the
aggregates (``memories.py``, ``aggregates.py``), so that the store behind it may be another one
than SQLite (``storage.SQLiteMemoryStore``), e.g. PostgreSQL for a team (issue #46)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol, TypeVar

from cognitive_memory.core.store.aggregates import (
    ChangeRecords,
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
from cognitive_memory.core.store.values import TableRows

__all__ = ["StoreOfRecord"]

T = TypeVar("T")


class StoreOfRecord(Protocol):
    """Every memory with its links, versions, sources, trash and words, and what follows from
    them: one aggregate each (a property), written in transactions of the store's own."""

    @property
    def memories(self) -> MemoryRecords: ...

    @property
    def history(self) -> VersionRecords: ...

    @property
    def links(self) -> LinkRecords: ...

    @property
    def words(self) -> WordRecords: ...

    @property
    def sources(self) -> SourceRecords: ...

    @property
    def trash(self) -> TrashRecords: ...

    @property
    def word_documents(self) -> WordDocumentRecords: ...

    @property
    def indexed_words(self) -> IndexedWordRecords: ...

    @property
    def outbox(self) -> OutboxRecords: ...

    @property
    def changes(self) -> ChangeRecords: ...

    @property
    def damaged(self) -> DamagedRecords: ...

    @property
    def properties(self) -> PropertyRecords: ...

    @property
    def duplicates(self) -> DuplicateRecords: ...

    @property
    def path(self) -> Path:
        """Where the store is on this machine (SQLite: its file): backups go beside it, and
        status names it."""
        ...

    def exclusive(self, name: str, waiting: Callable[[str], None]) -> AbstractContextManager[None]:
        """Hold the store's lock ``name``: one holder at a time across every process that opens
        the store, on any machine; when another holds it, ``waiting`` is called once with the
        holder's name (host or process as the store knows it) and the lock is waited for.
        Released on leaving, and when the holding process dies (``storage/exclusive.py``)."""
        ...

    @property
    def where(self) -> str:
        """The store as messages and ``status`` name it: the SQLite file's path, or the database
        server's URL without its password."""
        ...

    def check_in_place(self) -> None:
        """Raise ``StorageError`` when the store is no longer the one opened (its file deleted or
        replaced under this process), so that nothing stored now would survive."""
        ...

    def size_bytes(self) -> int:
        """What the store takes on disk, in bytes."""
        ...

    def together(self, work: Callable[[], T]) -> T:
        """What ``work`` returns, its reads of the aggregates made as one read (one snapshot)."""
        ...

    def copy_into(self, target: StoreOfRecord) -> dict[str, int]:
        """Copy every memory, version, link, source, trash entry and word count into ``target``,
        an empty store of either kind, from one read of this store, in one transaction of the
        target; the rows of each table counted on both sides (``StorageError`` and nothing
        written when they differ, or when ``target`` is not empty). Returns the counts."""
        ...

    def take_rows(self, pages: Iterable[TableRows], expected: Mapping[str, int]) -> dict[str, int]:
        """Write a moved store's rows (``copy_into``) into this empty store, in one transaction
        that checks the counts against ``expected``."""
        ...

    def close(self) -> None:
        """Close the store; nothing reads or writes it afterwards."""
        ...
