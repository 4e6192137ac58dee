"""The layout of an Edge shard (its configuration, read back from disk too) and the requests
``edge_store.EdgeVectorStore`` sends it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from cognitive_memory.core.memory import Vector
from cognitive_memory.index.sparse import WORDS, SparseVector
from cognitive_memory.index.vector_store import SEARCH_EF, VectorFilter, VectorPoint

__all__ = [
    "PAYLOAD_SCHEMA",
    "edge_filter",
    "edge_words",
    "has_words_vector",
    "nearest_request",
    "shard_config",
    "stored_config",
    "stored_datatype",
    "vectors_of",
]

PAYLOAD_SCHEMA = {
    "integer": qe.PayloadSchemaType.Integer,
    "keyword": qe.PayloadSchemaType.Keyword,
    "float": qe.PayloadSchemaType.Float,
}
# Segments holding more vector data than this get an HNSW index when the optimizers run. Edge's
# default (10 MB, about 6,600 384-d vectors) left a store of 5,000 unindexed after a build. In
# 32-bit floats: about 660 vectors (halved for 16-bit shards, to index as many vectors).
_INDEXING_THRESHOLD_KB = 1_000


def shard_config(
    dimension: int, datatype: qe.VectorStorageDatatype | None, *, words: bool = True
) -> qe.EdgeConfig:
    """The layout and the indexing threshold; given at load too, so older shards adopt it.
    New shards hold their vectors as 16-bit floats (SQLite keeps the 32-bit originals): half
    the memory, 0.77 GB less at 1,000,000 vectors; a shard made before keeps 32-bit ones
    (``datatype`` None) until it is rebuilt, since a shard's storage type cannot change.
    ``words``: the shard has the sparse word vector (with Qdrant's IDF modifier)."""
    params = qe.EdgeVectorParams(size=dimension, distance=qe.Distance.Cosine, datatype=datatype)
    # The threshold counts kilobytes of vectors: the same number of vectors either way.
    threshold = _INDEXING_THRESHOLD_KB // (2 if datatype == qe.VectorStorageDatatype.Float16 else 1)
    sparse = {WORDS: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)} if words else None
    return qe.EdgeConfig(
        vectors=params,
        sparse_vectors=sparse,
        optimizers=qe.EdgeOptimizersConfig(indexing_threshold=threshold),
    )


def nearest_request(vector: Vector, limit: int, where: VectorFilter | None, precise: bool) -> qe.QueryRequest:
    return qe.QueryRequest(
        limit=limit,
        query=qe.Query.Nearest(vector.tolist()),
        filter=edge_filter(where),
        params=qe.SearchParams(hnsw_ef=max(SEARCH_EF, limit)) if precise else None,
        with_payload=False,
        with_vector=False,
    )


def vectors_of(point: VectorPoint) -> Any:
    """The point's dense vector, with its words as the named sparse vector when it has any."""
    if not point.words:
        return point.vector.tolist()
    return {"": point.vector.tolist(), WORDS: edge_words(point.words)}


def edge_words(words: SparseVector) -> Any:
    """Words as Edge takes a sparse vector."""
    return qe.SparseVector(list(words.indices), list(words.values))


def stored_config(path: Path) -> dict[str, Any]:
    """The configuration Edge keeps beside the shard (``edge_config.json``); empty if unreadable."""
    try:
        stored = json.loads((path / "edge_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return stored if isinstance(stored, dict) else {}


def has_words_vector(path: Path) -> bool:
    """Whether the shard has the sparse word vector (shards made before it do not)."""
    sparse = stored_config(path).get("sparse_vectors")
    return isinstance(sparse, dict) and WORDS in sparse


def stored_datatype(path: Path) -> qe.VectorStorageDatatype | None:
    """The storage type of the shard's vectors, from the configuration Edge keeps beside them
    (``edge_config.json``): loading with another one is refused. None: 32-bit floats."""
    try:
        datatype = stored_config(path)["vectors"][""].get("datatype")
    except (KeyError, TypeError, AttributeError):
        return None
    return qe.VectorStorageDatatype.Float16 if datatype == "float16" else None


def edge_filter(where: VectorFilter | None) -> qe.Filter | None:
    if where is None or where.is_empty():
        return None
    must: list[Any] = [
        qe.FieldCondition(name, match=qe.MatchAny(list(values)))
        for name, values in where.conditions().items()
    ]
    if where.has_range:
        span = qe.RangeFloat(gte=where.created_after, lt=where.created_before)
        must.append(qe.FieldCondition("created_at", range=span))
    return qe.Filter(must=must)
