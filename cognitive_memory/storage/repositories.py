"""What both stores of record are: the repositories, by aggregate, over one database.

Each repository works through the store's one database (its transactions and reads,
``storage/sql.py``'s ``DatabaseAccess``): ``memories``, ``links``, ``sources``, ``trash``,
``words``, ``word_documents`` (what the word vectors are weighted from), ``indexed_words``
(whether the index holds them all), ``history`` (versions), ``outbox``, ``changes`` (the change
log: what changed since a reader last looked), ``damaged`` and ``properties``; ``duplicates`` is
consolidation's merge of near duplicates. ``SQLiteMemoryStore`` puts them over a SQLite file,
``PostgresMemoryStore`` over a PostgreSQL database; the same code runs on both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Protocol, TypeVar

from cognitive_memory.core.store import StoreOfRecord
from cognitive_memory.core.store.values import TableRows
from cognitive_memory.storage import consolidation, damaged, moving
from cognitive_memory.storage.change_log import ChangeLog
from cognitive_memory.storage.indexed_words import IndexedWords
from cognitive_memory.storage.lexical import Words
from cognitive_memory.storage.links import Links
from cognitive_memory.storage.memories import Memories
from cognitive_memory.storage.outbox import Outbox
from cognitive_memory.storage.own_changes import OwnChanges
from cognitive_memory.storage.properties import StoreProperties
from cognitive_memory.storage.sources import Sources
from cognitive_memory.storage.sql import Connection, DatabaseAccess
from cognitive_memory.storage.trash import TrashBin
from cognitive_memory.storage.versions import VersionHistory
from cognitive_memory.storage.word_documents import WordDocuments

__all__ = ["Repositories", "StoreDatabase"]

T = TypeVar("T")


class Located(Protocol):
    """Which database was opened, checked around writes."""

    def check(self) -> None: ...


class StoreDatabase(DatabaseAccess, Protocol):
    """A store's database as the store itself uses it, beside what the repositories use."""

    @property
    def path(self) -> Path: ...

    @property
    def location(self) -> Located: ...

    @property
    def own_changes(self) -> OwnChanges: ...

    def size_bytes(self) -> int: ...

    def close(self) -> None: ...


class Repositories:
    """The repositories over ``database``, and what a store does with all of them at once."""

    def __init__(self, database: StoreDatabase) -> None:
        self.database = database
        self.properties = StoreProperties(database)
        self.memories = Memories(database, self.properties.dimension)
        self.links = Links(database)
        self.sources = Sources(database)
        self.trash = TrashBin(database.transaction)
        self.indexed_words = IndexedWords(database)
        self.words = Words(database, self.indexed_words)
        self.word_documents = WordDocuments(database)
        self.history = VersionHistory(database)
        self.outbox = Outbox(database)
        self.changes = ChangeLog(database, database.own_changes)
        self.damaged = damaged.DamagedRows(database, self.properties.dimension)

    @property
    def path(self) -> Path:
        """Where the store is on this machine: what goes beside a store goes beside it."""
        return self.database.path

    @property
    def duplicates(self) -> consolidation.DuplicateMerge:
        """Consolidation's merge of near duplicates, at the vector size the store records."""
        return consolidation.DuplicateMerge(self.database.transaction, self.properties.dimension())

    def check_in_place(self) -> None:
        """Raise ``StorageError`` when the database is no longer the one opened (``location``)."""
        self.database.location.check()

    def size_bytes(self) -> int:
        """What the database takes on disk, in bytes."""
        return self.database.size_bytes()

    def together(self, work: Callable[[], T]) -> T:
        """What ``work`` returns, every read it makes of the repositories joined into one read
        transaction (``DatabaseAccess.read``): one snapshot of the database."""
        return self.database.read(lambda _conn: work())

    def copy_into(self, target: StoreOfRecord) -> dict[str, int]:
        """Copy every row of this store into the empty ``target`` (``storage/moving.py``)."""

        def copy(conn: Connection) -> dict[str, int]:
            return target.take_rows(moving.rows_of(conn), moving.count_rows(conn))

        return self.database.read_apart(copy)

    def take_rows(self, pages: Iterable[TableRows], expected: Mapping[str, int]) -> dict[str, int]:
        """Write a moved store's rows into this empty store (``storage/moving.py``)."""
        return moving.take_rows(self.database, pages, expected)

    def close(self) -> None:
        """Close the database."""
        self.database.close()
