"""The layout of an Edge shard (its configuration, read back from disk too) and the requests
``edge_store.EdgeVectorStore`` sends it."""

from __future__ import annotations

import functools
import json
import logging
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from cognitive_memory.core.memory import Vector
from cognitive_memory.index.sparse import WORDS, SparseVector
from cognitive_memory.index.vector_store import SEARCH_EF, VectorFilter, VectorPoint
from cognitive_memory.regular_files import NotRegularFileError, read_regular

__all__ = [
    "edge_filter",
    "edge_words",
    "has_words_vector",
    "heap_loaded",
    "nearest_request",
    "payload_index",
    "shard_config",
    "stored_config",
    "stored_datatype",
    "vectors_of",
]

logger = logging.getLogger(__name__)

# Vectors, graph, word index and payload indexes memory-mapped and warmed into the page cache at
# load, instead of read onto the heap: at 100,000 vectors a shard loaded in about half the time
# and searched no slower (docs/performance.md, "The shard memory-mapped"). Segments made before
# keep their placement until they are rewritten (``heap_loaded``; the owner rebuilds the shard).
_MEMORY: qe.Memory | None = qe.Memory.Cached
# Edge's HNSW defaults, given so the graph's memory tier can be set beside them.
_HNSW_M, _HNSW_EF_CONSTRUCT, _HNSW_FULL_SCAN_KB = 16, 100, 10_000
# Segments holding more vector data than this get an HNSW index when the optimizers run. Edge's
# default (10 MB, about 6,600 384-d vectors) left a store of 5,000 unindexed after a build. In
# 32-bit floats: about 660 vectors (halved for 16-bit shards, to index as many vectors).
_INDEXING_THRESHOLD_KB = 1_000


def payload_index(kind: str) -> Any:
    """The index of a payload field of ``kind`` (``INDEXED_FIELDS``), placed as ``_MEMORY`` says."""
    if kind == "integer":
        return qe.IntegerIndexParams(lookup=True, range=True, memory=_MEMORY)
    if kind == "float":
        return qe.FloatIndexParams(memory=_MEMORY)
    return qe.KeywordIndexParams(memory=_MEMORY)


def shard_config(
    dimension: int, datatype: qe.VectorStorageDatatype | None, *, words: bool = True
) -> qe.EdgeConfig:
    """The layout and the indexing threshold; given at load too, so older shards adopt it.
    New shards hold their vectors as 16-bit floats (SQLite keeps the 32-bit originals): half
    the memory, 0.77 GB less at 1,000,000 vectors; a shard made before keeps 32-bit ones
    (``datatype`` None) until it is rebuilt, since a shard's storage type cannot change.
    ``words``: the shard has the sparse word vector (with Qdrant's IDF modifier)."""
    params = qe.EdgeVectorParams(
        size=dimension, distance=qe.Distance.Cosine, datatype=datatype, memory=_MEMORY
    )
    # The threshold counts kilobytes of vectors: the same number of vectors either way.
    threshold = _INDEXING_THRESHOLD_KB // (2 if datatype == qe.VectorStorageDatatype.Float16 else 1)
    sparse = {WORDS: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf, memory=_MEMORY)} if words else None
    graph = qe.HnswIndexConfig(
        m=_HNSW_M, ef_construct=_HNSW_EF_CONSTRUCT, full_scan_threshold=_HNSW_FULL_SCAN_KB, memory=_MEMORY
    )
    return qe.EdgeConfig(
        vectors=params,
        sparse_vectors=sparse,
        hnsw_config=graph,
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
        stored = json.loads(read_regular(path / "edge_config.json"))
    except NotRegularFileError as exc:
        logger.warning("Ignoring %s: it is %s, not Edge's configuration.", exc.path, exc.what)
        return {}
    except (OSError, ValueError):
        return {}
    return stored if isinstance(stored, dict) else {}


def has_words_vector(path: Path) -> bool:
    """Whether the shard has the sparse word vector (shards made before it do not)."""
    sparse = stored_config(path).get("sparse_vectors")
    return isinstance(sparse, dict) and WORDS in sparse


def heap_loaded(path: Path) -> int:
    """How many of the shard's indexed segments hold their HNSW graph, word index or payload
    indexes on the heap (made before ``_MEMORY``): each is read whole at load, where a
    memory-mapped one is only mapped. Segments still appended to have no graph and stay small."""
    count = 0
    for segment in path.glob("segments/*"):
        try:
            config = json.loads(read_regular(segment / "segment.json"))["config"]
            dense = config["vector_data"][""]["index"]
            words = config.get("sparse_vector_data", {}).get(WORDS, {}).get("index", {})
            payload = json.loads(read_regular(segment / "payload_index" / "config.json"))
            fields = payload.get("indexed_fields", {}).values()
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue  # an unreadable segment is Edge's to report at load
        if dense.get("type") != "hnsw":
            continue
        count += (
            "memory" not in dense.get("options", {})
            or words.get("index_type") == "ImmutableRam"
            or any(not isinstance(field, dict) or "memory" not in field for field in fields)
        )
    return count


def stored_datatype(path: Path) -> qe.VectorStorageDatatype | None:
    """The storage type of the shard's vectors, from the configuration Edge keeps beside them
    (``edge_config.json``): loading with another one is refused. None: 32-bit floats."""
    try:
        datatype = stored_config(path)["vectors"][""].get("datatype")
    except (KeyError, TypeError, AttributeError):
        return None
    return qe.VectorStorageDatatype.Float16 if datatype == "float16" else None


@functools.lru_cache(maxsize=8)
def edge_filter(where: VectorFilter | None) -> qe.Filter | None:
    """``where`` as Edge takes it. Kept for the next requests: a recall asks for the same filter
    in every request it makes (meaning, words, bridges), and a session's ids take Edge 1.6 us
    each to read (8 ms for 5,000)."""
    if where is None or where.is_empty():
        return None
    must: list[Any] = [
        qe.FieldCondition(name, match=qe.MatchAny(list(values)))
        for name, values in where.conditions().items()
    ]
    if where.has_range:
        span = qe.RangeFloat(gte=where.created_after, lt=where.created_before)
        must.append(qe.FieldCondition("created_at", range=span))
    if where.ids is not None:
        must.append(qe.HasIdCondition(set(where.ids)))
    return qe.Filter(must=must)
