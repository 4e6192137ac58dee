"""The vector index behind one narrow protocol, and a brute-force in-memory implementation."""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from cognitive_memory.core.memory import CognitiveMemory, Vector
from cognitive_memory.core.vector_filter import SESSION_FIELD, VectorFilter
from cognitive_memory.errors import RejectedPointsError
from cognitive_memory.index.sparse import SparseVector

__all__ = [
    "INDEXED_FIELDS",
    "SESSION_FIELD",
    "ArrayVectorStore",
    "VectorFilter",
    "VectorHit",
    "VectorPoint",
    "VectorStore",
    "VectorStoreInfo",
    "check_points",
    "idf",
    "is_point_id",
    "payload_for",
    "point_problem",
]

# Payload fields recall filters on, with their index kind; every backend indexes them on creation.
INDEXED_FIELDS: Mapping[str, str] = {
    "hierarchy_level": "integer",
    "memory_type": "keyword",
    "loader_type": "keyword",
    "tags": "keyword",
    "project": "keyword",
    "created_at": "float",
    SESSION_FIELD: "keyword",
}


@dataclass(frozen=True, slots=True)
class VectorPoint:
    """A memory in the index: its dense vector, its payload and, when it has any words, their
    sparse vector (``index/sparse.py``), kept beside the dense one as the named vector ``words``."""

    id: str
    vector: Vector
    payload: Mapping[str, Any]
    words: SparseVector = field(default_factory=SparseVector)


@dataclass(frozen=True, slots=True)
class VectorHit:
    id: str
    score: float


@dataclass(frozen=True, slots=True)
class VectorStoreInfo:
    """What memory_status and doctor report about the index."""

    backend: str
    mode: str
    location: str
    status: str
    vector_count: int
    size_bytes: int
    details: Mapping[str, Any] = field(default_factory=dict)


# How wide a precise HNSW search looks (Qdrant's `hnsw_ef`): wide enough to find nearly all of
# exact search's top 50 (docs/performance.md: "Measurements behind the code").
SEARCH_EF = 512


# A point id Qdrant keeps as given: a UUID written as Qdrant writes it back. Qdrant refuses
# other strings, and rewrites other spellings of a UUID (capitals, no hyphens, braces), so a
# search would answer an id SQLite does not know and a rebuild would delete the point as stale.
_POINT_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def is_point_id(value: object) -> bool:
    """True for an id the vector index takes and gives back unchanged (a lowercase, hyphenated UUID)."""
    return isinstance(value, str) and _POINT_ID.fullmatch(value) is not None


def point_problem(point: VectorPoint, dimension: int) -> str | None:
    """What makes ``point`` impossible to index as it is, if anything."""
    if not is_point_id(point.id):
        return (
            f"its id {point.id!r} is not a UUID as the vector index writes it "
            "(lowercase, hyphenated, like 1b4e28ba-2fa1-41d2-883f-0016d3cca427)"
        )
    if point.vector.shape != (dimension,):
        return f"its vector has {point.vector.size} numbers where the index holds {dimension}"
    if not np.isfinite(point.vector).all():
        return "its vector holds NaN or infinite numbers"
    return None


def check_points(points: Sequence[VectorPoint], dimension: int) -> None:
    """Refuse the whole call (``RejectedPointsError``, naming each bad point) if any point cannot
    be indexed: a backend checks before it writes, so one bad point never half-writes a batch."""
    rejected = {p.id: problem for p in points if (problem := point_problem(p, dimension)) is not None}
    if rejected:
        named = "; ".join(f"{point_id}: {problem}" for point_id, problem in list(rejected.items())[:3])
        more = f" (and {len(rejected) - 3} more)" if len(rejected) > 3 else ""
        raise RejectedPointsError(
            f"The vector index cannot take {len(rejected)} of {len(points)} points ({named}{more}); "
            "nothing of this write was applied. `memory_system doctor` names the memories and "
            "`doctor --repair` sets them aside.",
            rejected,
        )


class VectorStore(Protocol):
    """Cosine nearest-neighbour search over memory vectors with payload filters."""

    def upsert(self, points: Sequence[VectorPoint]) -> None:
        """Write the points; any point the index cannot take (``point_problem``) refuses the
        whole call with ``RejectedPointsError`` before anything is written."""
        ...

    def delete(self, ids: Sequence[str]) -> None:
        """Delete these points; an id the index could never hold (``is_point_id``) is skipped."""
        ...

    def update_words(self, words: Mapping[str, SparseVector]) -> list[str]:
        """Replace the words of the points the index holds (id to words; empty words take them
        away), leaving their dense vector and payload as they are; returns the ids it does not
        hold, left unwritten (the caller upserts them whole)."""
        ...

    def search(
        self, vector: Vector, limit: int, where: VectorFilter | None = None, *, precise: bool = False
    ) -> list[VectorHit]:
        """The ``limit`` nearest vectors; ``precise`` searches the approximate index wider
        (``SEARCH_EF``), for the candidates recall ranks, at some cost per query."""
        ...

    def search_many(
        self, vectors: Sequence[Vector], limit: int, where: VectorFilter | None = None
    ) -> list[list[VectorHit]]:
        """``search`` of each of ``vectors``, in one call to the index (recall's bridges)."""
        ...

    def search_with_words(
        self,
        vector: Vector,
        words: SparseVector,
        limit: int,
        where: VectorFilter | None = None,
        *,
        precise: bool = False,
    ) -> tuple[list[VectorHit], list[VectorHit]]:
        """In one call to the index: the ``limit`` nearest vectors (as ``search``) and the
        ``limit`` best word matches, scored as the sum over the query's terms of the query's weight
        x the IDF over the points that have words (``idf``) x the memory's weight; no words, no
        word matches."""
        ...

    def count(self) -> int: ...

    def ids(self) -> list[str]:
        """Every point id in the index (for rebuilding it from SQLite)."""
        ...

    def info(self) -> VectorStoreInfo: ...

    def build_index(self, min_unindexed: int) -> bool:
        """Build the approximate (HNSW) index when at least ``min_unindexed`` vectors are only
        searched exactly; True if it was built. Blocks while it runs (seconds at 100k vectors)."""
        ...

    def has_sessions(self) -> bool:
        """Whether every point's payload holds its memory's session (``session_id``), so that a
        session filter is searched in the index. An index made before the session was in the
        payload says False until it is copied again from SQLite (``copy_vectors``)."""
        ...

    def mark_sessions(self) -> None:
        """Record that every point's payload holds its session (``copy_vectors``, once it wrote
        them all): the mark is kept with the index (Edge: the payload index on ``session_id``;
        a Qdrant server: that index and the collection's metadata)."""
        ...

    def close(self) -> None: ...


def idf(points: int, holding: int) -> float:
    """A term's inverse document frequency as Qdrant's ``Modifier.Idf`` computes it (BM25's):
    ``points`` have words, ``holding`` of them hold the term."""
    return math.log((points - holding + 0.5) / (holding + 0.5) + 1.0)


def payload_for(memory: CognitiveMemory) -> dict[str, Any]:
    """The payload kept beside a memory's vector: the fields recall filters on."""
    payload: dict[str, Any] = {
        "hierarchy_level": int(memory.hierarchy_level),
        "memory_type": memory.memory_type.value,
        "tags": list(memory.tags),
        "created_at": memory.timestamp.timestamp(),
    }
    if memory.source.loader_type is not None:
        payload["loader_type"] = memory.source.loader_type
    payload["project"] = memory.project
    if memory.session_id is not None:
        payload[SESSION_FIELD] = memory.session_id
    return payload


class ArrayVectorStore:
    """Exact search over a numpy matrix in memory: for tests and throwaway stores."""

    def __init__(self, dimension: int = 384) -> None:
        self._dimension = dimension
        self._points: dict[str, VectorPoint] = {}
        self._lock = threading.Lock()

    def upsert(self, points: Sequence[VectorPoint]) -> None:
        check_points(points, self._dimension)
        with self._lock:
            self._points.update({point.id: point for point in points})

    def delete(self, ids: Sequence[str]) -> None:
        with self._lock:
            for point_id in filter(is_point_id, ids):
                self._points.pop(point_id, None)

    def update_words(self, words: Mapping[str, SparseVector]) -> list[str]:
        with self._lock:
            for point_id in words.keys() & self._points.keys():
                self._points[point_id] = replace(self._points[point_id], words=words[point_id])
            return [point_id for point_id in words if point_id not in self._points]

    def search(
        self, vector: Vector, limit: int, where: VectorFilter | None = None, *, precise: bool = False
    ) -> list[VectorHit]:
        with self._lock:
            points = [p for p in self._points.values() if _kept(p, where)]
        if not points:
            return []
        matrix = np.stack([p.vector for p in points])
        scores = matrix @ vector
        order = np.argsort(-scores)[:limit]
        return [VectorHit(points[i].id, float(scores[i])) for i in order]

    def search_many(
        self, vectors: Sequence[Vector], limit: int, where: VectorFilter | None = None
    ) -> list[list[VectorHit]]:
        return [self.search(vector, limit, where) for vector in vectors]

    def search_with_words(
        self,
        vector: Vector,
        words: SparseVector,
        limit: int,
        where: VectorFilter | None = None,
        *,
        precise: bool = False,
    ) -> tuple[list[VectorHit], list[VectorHit]]:
        return self.search(vector, limit, where), self._word_matches(words, limit, where)

    def _word_matches(self, words: SparseVector, limit: int, where: VectorFilter | None) -> list[VectorHit]:
        with self._lock:
            worded = [p for p in self._points.values() if p.words]
        holding = dict.fromkeys(words.indices, 0)
        for point in worded:
            for term in holding.keys() & set(point.words.indices):
                holding[term] += 1
        weight = {
            term: value * idf(len(worded), holding[term])
            for term, value in zip(words.indices, words.values, strict=True)
        }
        scored = []
        for point in worded:
            if _kept(point, where):
                held = zip(point.words.indices, point.words.values, strict=True)
                score = sum(weight[term] * value for term, value in held if term in weight)
                if score > 0:
                    scored.append(VectorHit(point.id, score))
        return sorted(scored, key=lambda hit: hit.score, reverse=True)[:limit]

    def count(self) -> int:
        return len(self._points)

    def ids(self) -> list[str]:
        with self._lock:
            return list(self._points)

    def info(self) -> VectorStoreInfo:
        return VectorStoreInfo("array", "in-memory", "memory", "ok", self.count(), 0)

    def build_index(self, min_unindexed: int) -> bool:
        """Exact search only: there is no index to build."""
        return False

    def has_sessions(self) -> bool:
        """Always: it lives no longer than the process, whose every point has its session."""
        return True

    def mark_sessions(self) -> None:
        """Nothing to record."""

    def close(self) -> None:
        """Nothing to release."""


def _kept(point: VectorPoint, where: VectorFilter | None) -> bool:
    """True when ``where`` keeps ``point`` (its id and its payload)."""
    return where is None or (where.admits(point.id) and where.matches(point.payload))
