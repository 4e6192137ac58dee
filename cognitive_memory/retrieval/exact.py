"""Exact nearest-neighbour search over vectors read from SQLite: what recall searches in place of
the index under a session filter (the index holds no session)."""

from __future__ import annotations

import numpy as np

from cognitive_memory.core.memory import Vector
from cognitive_memory.index.vector_store import VectorFilter, VectorHit
from cognitive_memory.retrieval.reading import MemoryReads

__all__ = ["SESSION_SCAN", "nearest", "session_vectors"]

# Under a session filter recall reads at most this many of the session's memories (the latest).
SESSION_SCAN = 5_000


def nearest(vectors: dict[str, Vector], query: Vector, limit: int) -> list[VectorHit]:
    """The ``limit`` of ``vectors`` nearest ``query`` by cosine (they are normalised), nearest first."""
    if not vectors:
        return []
    ids = list(vectors)
    scores = np.stack([vectors[i] for i in ids]) @ query
    order = np.argsort(-scores, kind="stable")[:limit]
    return [VectorHit(ids[i], float(scores[i])) for i in order]


def session_vectors(memories: MemoryReads, where: VectorFilter | None) -> dict[str, Vector] | None:
    """Under a session filter, the vectors of the latest SESSION_SCAN memories matching ``where``,
    which recall searches exactly in place of the index (it holds no session); else None."""
    if where is None or not where.sessions:
        return None
    return memories.vectors(memories.latest_matching(where, SESSION_SCAN))
