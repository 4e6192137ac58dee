"""The store of record: SQLite, the source of truth for every memory, link, source and version.

``SQLiteMemoryStore`` composes one ``Database`` and its repositories by aggregate; the SQL
lives in one module per concern. The vector index that is rebuilt from it lives in
`cognitive_memory.index`.
"""

from cognitive_memory.storage.memories import MemoryCounts
from cognitive_memory.storage.sqlite_store import SQLiteMemoryStore

__all__ = ["MemoryCounts", "SQLiteMemoryStore"]
