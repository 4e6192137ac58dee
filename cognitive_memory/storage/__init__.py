"""The store of record: SQLite, the source of truth for every memory, link, source and version.

The vector index that is rebuilt from it lives in `cognitive_memory.index`.
"""

from cognitive_memory.storage.sqlite_store import MemoryCounts, SQLiteMemoryStore

__all__ = ["MemoryCounts", "SQLiteMemoryStore"]
