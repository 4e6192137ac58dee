"""Opening a store of record by its location: a ``postgresql://`` URL (a team's database on a
server) or the path of a SQLite file. What the composition root, the index builder's process and
``move-store`` open a store with."""

from __future__ import annotations

from pathlib import Path

from cognitive_memory.storage.sqlite_store import SQLiteMemoryStore

__all__ = ["is_server", "open_store"]


def is_server(location: str) -> bool:
    """Whether ``location`` names a database server (a URL) rather than a SQLite file."""
    return "://" in location


def open_store(location: str) -> SQLiteMemoryStore:
    """The store of record at ``location``: the SQLite file there (made if missing)."""
    return SQLiteMemoryStore(Path(location).expanduser().absolute())
