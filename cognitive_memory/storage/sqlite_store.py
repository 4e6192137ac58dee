"""The store of record in one SQLite file: the repositories (``repositories.py``) over a
``Database`` (connection, lock, transactions, reads)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path

from cognitive_memory.storage.database import Database
from cognitive_memory.storage.exclusive import Waiting, held_beside
from cognitive_memory.storage.file_identity import FileIdentity
from cognitive_memory.storage.migrations import apply_migrations
from cognitive_memory.storage.repositories import Repositories
from cognitive_memory.storage.rows import fill_content_keys

__all__ = ["SQLiteMemoryStore"]


class SQLiteMemoryStore(Repositories):
    """Memories, their links, sources, versions and trash in one SQLite file (WAL mode, FULL sync:
    a commit is durable); callers use the repositories."""

    database: Database

    def __init__(self, path: Path) -> None:
        super().__init__(Database(path, (apply_migrations, fill_content_keys)))

    def exclusive(self, name: str, waiting: Waiting) -> AbstractContextManager[None]:
        """Hold the lock ``name``: a ``flock`` on a file beside the database (``exclusive.py``)."""
        return held_beside(self.database.path, name, waiting)

    @property
    def where(self) -> str:
        """The database file's path."""
        return str(self.database.path)

    @property
    def location(self) -> FileIdentity:
        """The identity of the database file, checked around every write (see ``file_identity``)."""
        return self.database.location
