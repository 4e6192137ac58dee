"""Opening a store of record by its location: a ``postgresql://`` URL (a team's database on a
server) or the path of a SQLite file. What the composition root, the index builder's process and
``move-store`` open a store with."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cognitive_memory.storage.sqlite_store import SQLiteMemoryStore

if TYPE_CHECKING:  # psycopg is imported when a server's store is opened (0.1-0.2 s), not before
    from cognitive_memory.storage.postgres.store import PostgresMemoryStore

__all__ = ["is_server", "named", "open_store"]

# Where a server's store stands on this machine (beside it: backups), in the
# data directory.
SERVER_STAND_IN = "postgresql.store"


def is_server(location: str) -> bool:
    """Whether ``location`` names a database server (a URL) rather than a SQLite file."""
    return "://" in location


def open_store(location: str, data_dir: Path | None = None) -> SQLiteMemoryStore | PostgresMemoryStore:
    """The store of record at ``location``: the PostgreSQL database at that URL (its tables made
    if missing; what goes beside a store goes in ``data_dir``), or the SQLite file there (made if
    missing)."""
    if is_server(location):
        from cognitive_memory.storage.postgres.store import PostgresMemoryStore

        beside = (data_dir or Path.cwd()).expanduser().absolute() / SERVER_STAND_IN
        return PostgresMemoryStore(location, beside)
    return SQLiteMemoryStore(Path(location).expanduser().absolute())


def named(location: str) -> str:
    """``location`` as messages show it: a server's URL without its password, a file's absolute path."""
    if is_server(location):
        from cognitive_memory.storage.postgres.errors import server_name

        return server_name(location)
    return str(Path(location).expanduser().absolute())
