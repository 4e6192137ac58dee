"""A vector index opened outside a running system: to copy SQLite's vectors into a Qdrant server
(``qdrant migrate``), to rebuild one for a restored snapshot (``restore``), and to count the points
of an embedded store (``qdrant status``).

SQLite keeps every memory's vector, so nothing is re-embedded: copies go through
``index_replication.copy_vectors``, the path that also rebuilds an index.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from cognitive_memory.index.edge_store import EdgeVectorStore
from cognitive_memory.main import EMBEDDING_DIMENSION
from cognitive_memory.replicas.index_replication import CopyReport, copy_vectors
from cognitive_memory.storage.sqlite_store import SQLiteMemoryStore

if TYPE_CHECKING:
    from cognitive_memory.index.vector_store import VectorStore
    from cognitive_memory.settings import StorageSettings

__all__ = ["embedded_point_count", "migrate_to_server", "open_embedded_index", "open_server_index"]


def open_embedded_index(path: Path) -> VectorStore:
    """The embedded Qdrant Edge store at ``path`` (made when missing), for the memory's vectors."""
    return EdgeVectorStore(path, EMBEDDING_DIMENSION)


def open_server_index(storage: StorageSettings) -> VectorStore:
    """The configured Qdrant server's collection (``QDRANT_URL``, ``QDRANT_API_KEY``)."""
    from cognitive_memory.index.qdrant_store import QdrantServerVectorStore

    key = storage.qdrant_api_key.get_secret_value() if storage.qdrant_api_key else None
    url = storage.qdrant_url or ""
    return QdrantServerVectorStore.connect(url, key, storage.qdrant_collection, EMBEDDING_DIMENSION)


def migrate_to_server(
    database: Path,
    url: str,
    api_key: str | None,
    collection: str,
    progress: Callable[[int, int], None] | None = None,
) -> CopyReport:
    """Copy every vector the database at ``database`` keeps into ``collection`` of the Qdrant
    server at ``url`` (made when missing), removing the points SQLite does not know."""
    from cognitive_memory.index.qdrant_store import QdrantServerVectorStore

    memories = SQLiteMemoryStore(database)
    target: QdrantServerVectorStore | None = None
    try:
        target = QdrantServerVectorStore.connect(url, api_key, collection, EMBEDDING_DIMENSION)
        return copy_vectors(memories, target, progress)
    finally:
        memories.close()
        if target is not None:
            target.close()


def embedded_point_count(path: Path) -> int:
    """How many points the embedded store at ``path`` holds (``StorageError`` when it cannot be
    opened, for instance while a server holds it)."""
    store = EdgeVectorStore(path)
    try:
        return store.count()
    finally:
        store.close()
