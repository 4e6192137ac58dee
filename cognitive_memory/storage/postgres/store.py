"""The store of record on a PostgreSQL server: the repositories of ``SQLiteMemoryStore`` over a
``PostgresDatabase`` instead of a SQLite file."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from cognitive_memory.core.store.values import TableRows
from cognitive_memory.storage import consolidation, damaged, moving
from cognitive_memory.storage.change_log import ChangeLog
from cognitive_memory.storage.indexed_words import IndexedWords
from cognitive_memory.storage.lexical import Words
from cognitive_memory.storage.links import Links
from cognitive_memory.storage.memories import Memories
from cognitive_memory.storage.outbox import Outbox
from cognitive_memory.storage.postgres.database import PostgresDatabase, ServerIdentity
from cognitive_memory.storage.postgres.errors import server_name
from cognitive_memory.storage.postgres.migrations import apply_migrations
from cognitive_memory.storage.properties import StoreProperties
from cognitive_memory.storage.sources import Sources
from cognitive_memory.storage.sql import Connection
from cognitive_memory.storage.trash import TrashBin
from cognitive_memory.storage.versions import VersionHistory
from cognitive_memory.storage.word_documents import WordDocuments

if TYPE_CHECKING:
    from cognitive_memory.core.store import StoreOfRecord

__all__ = ["PostgresMemoryStore"]

T = TypeVar("T")


class PostgresMemoryStore:
    """Memories, their links, sources, versions and trash in one PostgreSQL database (``url``);
    callers use the repositories, the same as ``SQLiteMemoryStore``'s. ``path`` is the place on
    this machine that stands for the store (what goes beside a store goes beside it); by default
    ``memories.postgres`` in the working directory."""

    def __init__(self, url: str, path: Path | None = None) -> None:
        self.database = PostgresDatabase(
            url, path or Path("memories.postgres").absolute(), (apply_migrations,)
        )
        database = self.database
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
        self.changes = ChangeLog(database)
        self.damaged = damaged.DamagedRows(database, self.properties.dimension)

    @property
    def path(self) -> Path:
        """The place on this machine that stands for the store (the database is on the server)."""
        return self.database.path

    @property
    def where(self) -> str:
        """The database's URL without its password: ``postgresql://user@host:port/database``."""
        return server_name(self.database.url)

    @property
    def location(self) -> ServerIdentity:
        """Which database was opened, checked at every write (see ``ServerIdentity``)."""
        return self.database.location

    @property
    def duplicates(self) -> consolidation.DuplicateMerge:
        """Consolidation's merge of near duplicates, at the vector size the store records."""
        return consolidation.DuplicateMerge(self.database.transaction, self.properties.dimension())

    def check_in_place(self) -> None:
        """Raise ``StorageError`` when a write found another database than the one opened."""
        self.database.location.check()

    def size_bytes(self) -> int:
        """What the database takes on the server's disk, in bytes."""
        return self.database.size_bytes()

    def together(self, work: Callable[[], T]) -> T:
        """What ``work`` returns, every read it makes of the repositories joined into one read
        transaction (``PostgresDatabase.read``): one snapshot of the database."""
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
        """Close the pool's connections."""
        self.database.close()


if TYPE_CHECKING:
    _SATISFIES: type[StoreOfRecord] = PostgresMemoryStore  # mypy checks the protocol here
