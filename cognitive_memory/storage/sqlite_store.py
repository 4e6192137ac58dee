"""The store of record: one SQLite database and its repositories, by aggregate.

Each repository works through the one ``Database`` (connection, lock, transactions, reads):
``memories``, ``links``, ``sources``, ``trash``, ``words``, ``word_documents`` (what the word
vectors are weighted from), ``indexed_words`` (whether the index holds them all), ``history``
(versions), ``outbox``, ``changes`` (the change log: what changed since a reader last looked),
``damaged`` and ``properties``; ``duplicates`` is consolidation's merge of near duplicates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TypeVar

from cognitive_memory.core.store import StoreOfRecord
from cognitive_memory.core.store.values import TableRows
from cognitive_memory.storage import consolidation, damaged, moving
from cognitive_memory.storage.change_log import ChangeLog
from cognitive_memory.storage.database import Database
from cognitive_memory.storage.file_identity import FileIdentity
from cognitive_memory.storage.indexed_words import IndexedWords
from cognitive_memory.storage.lexical import Words
from cognitive_memory.storage.links import Links
from cognitive_memory.storage.memories import Memories
from cognitive_memory.storage.migrations import apply_migrations
from cognitive_memory.storage.outbox import Outbox
from cognitive_memory.storage.properties import StoreProperties
from cognitive_memory.storage.rows import fill_content_keys
from cognitive_memory.storage.sources import Sources
from cognitive_memory.storage.sql import Connection
from cognitive_memory.storage.trash import TrashBin
from cognitive_memory.storage.versions import VersionHistory
from cognitive_memory.storage.word_documents import WordDocuments

__all__ = ["SQLiteMemoryStore"]

T = TypeVar("T")


class SQLiteMemoryStore:
    """Memories, their links, sources, versions and trash in one SQLite file (WAL mode, FULL sync:
    a commit is durable); callers use the repositories."""

    def __init__(self, path: Path) -> None:
        self.database = Database(path, (apply_migrations, fill_content_keys))
        self.properties = StoreProperties(self.database)
        self.memories = Memories(self.database, self.properties.dimension)
        self.links = Links(self.database)
        self.sources = Sources(self.database)
        self.trash = TrashBin(self.database.transaction)
        self.indexed_words = IndexedWords(self.database)
        self.words = Words(self.database, self.indexed_words)
        self.word_documents = WordDocuments(self.database)
        self.history = VersionHistory(self.database)
        self.outbox = Outbox(self.database)
        self.changes = ChangeLog(self.database)
        self.damaged = damaged.DamagedRows(self.database, self.properties.dimension)

    @property
    def path(self) -> Path:
        """The database file."""
        return self.database.path

    @property
    def where(self) -> str:
        """The database file's path."""
        return str(self.database.path)

    @property
    def location(self) -> FileIdentity:
        """The identity of the database file, checked around every write (see ``file_identity``)."""
        return self.database.location

    @property
    def duplicates(self) -> consolidation.DuplicateMerge:
        """Consolidation's merge of near duplicates, at the vector size the store records."""
        return consolidation.DuplicateMerge(self.database.transaction, self.properties.dimension())

    def check_in_place(self) -> None:
        """Raise ``StorageError`` when the database file is no longer the one opened (``location``)."""
        self.database.location.check()

    def size_bytes(self) -> int:
        """The database file with its WAL and shared-memory files, in bytes."""
        return self.database.size_bytes()

    def together(self, work: Callable[[], T]) -> T:
        """What ``work`` returns, every read it makes of the repositories joined into one read
        transaction (``Database.read``): one snapshot of the database."""
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
