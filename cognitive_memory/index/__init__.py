"""The vector index: the `VectorStore` protocol and its backends.

Embedded Qdrant Edge (`edge_store`), one embedded store served to other processes
(`shared_store`), a Qdrant server (`qdrant_store`, imported only when used, so that the
embedded default never pays for importing qdrant-client) and the in-memory array
(`vector_store.ArrayVectorStore`). SQLite (`cognitive_memory.storage`) is the source of
truth; everything here can be rebuilt from it.
"""

from cognitive_memory.index.edge_store import EdgeVectorStore
from cognitive_memory.index.vector_store import (
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
    "VectorFilter",
    "VectorHit",
    "VectorPoint",
    "VectorStore",
    "VectorStoreInfo",
    "payload_for",
]
