"""Storage: SQLite as the source of truth, a vector index (Qdrant Edge, Qdrant server, in-memory).

The Qdrant server backend lives in ``storage.qdrant_store`` and is imported only when used,
so that the embedded default never pays for importing qdrant-client.
"""

from cognitive_memory.storage.edge_store import EdgeVectorStore
from cognitive_memory.storage.sqlite_store import MemoryCounts, SQLiteMemoryStore
from cognitive_memory.storage.vector_store import (
    ArrayVectorStore,
    VectorFilter,
    VectorHit,
    VectorPoint,
    VectorStore,
    VectorStoreInfo,
    payload_for,
)

__all__ = [
    "ArrayVectorStore",
    "EdgeVectorStore",
    "MemoryCounts",
    "SQLiteMemoryStore",
    "VectorFilter",
    "VectorHit",
    "VectorPoint",
    "VectorStore",
    "VectorStoreInfo",
    "payload_for",
]
