"""Pure pieces of consolidation: nearest pairs above a cosine, groups by union-find, the survivor.

A group is the connected set of memories joined by pairs at or above the threshold (so two members
of a chain may be less alike than the threshold to each other; each is that alike to a neighbour).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "NEIGHBOURS",
    "DuplicateCandidate",
    "group_pairs",
    "nearest_pairs",
    "survivor_first",
    "unit_rows",
]

# Each memory is joined to at most this many of its nearest neighbours above the threshold: it
# bounds the work and the pairs, and a larger group still forms through its members' neighbours.
NEIGHBOURS = 10
# Rows compared with the whole project at once by the exact search (a block x n float32 matrix).
BLOCK_ROWS = 512

Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class DuplicateCandidate:
    """What choosing a survivor reads of a memory (``timestamp`` in seconds since the epoch)."""

    id: str
    access_count: int
    timestamp: float
    length: int


def survivor_first(members: Sequence[DuplicateCandidate]) -> list[DuplicateCandidate]:
    """The group ordered so the survivor comes first: the most accessed (what is used is what to
    keep), then the oldest (the one links and answers have pointed at longest), then the longest
    text (it holds the most), then the smallest id (a stable tie-break)."""
    return sorted(members, key=lambda m: (-m.access_count, m.timestamp, -m.length, m.id))


def unit_rows(vectors: Matrix) -> Matrix:
    """Each row scaled to length 1 (zero rows stay zero), so a dot product is the cosine."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    units: Matrix = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0).astype(np.float32)
    return units


def nearest_pairs(
    units: Matrix, threshold: float, neighbours: int = NEIGHBOURS
) -> list[tuple[int, int, float]]:
    """Exact search: for each row its up to ``neighbours`` nearest other rows at or above
    ``threshold``, as ``(i, j, cosine)`` with i < j (each pair once), over unit rows."""
    count = len(units)
    found: dict[tuple[int, int], float] = {}
    for start in range(0, count, BLOCK_ROWS):
        scores = units[start : start + BLOCK_ROWS] @ units.T
        for offset, row in enumerate(scores):
            i = start + offset
            row[i] = -np.inf
            take = min(neighbours, count - 1)
            if take <= 0:
                continue
            best = np.argpartition(-row, take - 1)[:take]
            for j in best[row[best] >= threshold]:
                found[(min(i, int(j)), max(i, int(j)))] = float(row[j])
    return [(i, j, score) for (i, j), score in sorted(found.items())]


def group_pairs(count: int, pairs: Sequence[tuple[int, int, float]]) -> list[list[int]]:
    """Union-find over ``count`` items joined by ``pairs``: the groups of two or more, each in
    ascending order, ordered by their first item."""
    parent = list(range(count))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j, _ in pairs:
        a, b = root(i), root(j)
        if a != b:
            parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for i in range(count):
        groups.setdefault(root(i), []).append(i)
    return [members for members in groups.values() if len(members) > 1]
