"""The store of record on a PostgreSQL server: the repositories (``storage/repositories.py``)
over a ``PostgresDatabase`` instead of a SQLite file."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from cognitive_memory.storage.exclusive import Waiting
from cognitive_memory.storage.postgres.database import PostgresDatabase, ServerIdentity
from cognitive_memory.storage.postgres.errors import server_name
from cognitive_memory.storage.postgres.migrations import apply_migrations
from cognitive_memory.storage.repositories import Repositories

if TYPE_CHECKING:
    from cognitive_memory.core.store import StoreOfRecord

__all__ = ["PostgresMemoryStore"]


class PostgresMemoryStore(Repositories):
    """Memories, their links, sources, versions and trash in one PostgreSQL database (``url``);
    callers use the repositories, the same as ``SQLiteMemoryStore``'s. ``path`` is the place on
    this machine that stands for the store (what goes beside a store goes beside it); by default
    ``memories.postgres`` in the working directory."""

    database: PostgresDatabase

    def __init__(self, url: str, path: Path | None = None) -> None:
        super().__init__(
            PostgresDatabase(url, path or Path("memories.postgres").absolute(), (apply_migrations,))
        )

    def exclusive(self, name: str, waiting: Waiting) -> AbstractContextManager[None]:
        """Hold the lock ``name``: an advisory lock of the database (``PostgresDatabase.held``)."""
        return self.database.held(name, waiting)

    @property
    def where(self) -> str:
        """The database's URL without its password: ``postgresql://user@host:port/database``."""
        return server_name(self.database.url)

    @property
    def location(self) -> ServerIdentity:
        """Which database was opened, checked at every write (see ``ServerIdentity``)."""
        return self.database.location


if TYPE_CHECKING:
    _SATISFIES: type[StoreOfRecord] = PostgresMemoryStore  # mypy checks the protocol here
