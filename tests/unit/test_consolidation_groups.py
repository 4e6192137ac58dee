"""The pure pieces of consolidation: pairs above a cosine, union-find groups, the survivor rule."""

from __future__ import annotations

import numpy as np

from cognitive_memory.core.consolidation import (
    DuplicateCandidate,
    group_pairs,
    nearest_pairs,
    survivor_first,
    unit_rows,
)


def test_nearest_pairs_keeps_pairs_at_or_above_the_threshold_once() -> None:
    vectors = np.array([[1, 0, 0], [0.99, 0.1, 0], [0, 1, 0], [0, 0, 2]], dtype=np.float32)

    pairs = nearest_pairs(unit_rows(vectors), 0.92)

    assert [(i, j) for i, j, _ in pairs] == [(0, 1)]
    assert pairs[0][2] > 0.99


def test_nearest_pairs_bounds_each_memory_to_its_nearest_neighbours() -> None:
    vectors = np.ones((6, 4), dtype=np.float32)

    pairs = nearest_pairs(unit_rows(vectors), 0.92, neighbours=1)

    assert len(pairs) <= 6
    assert len(group_pairs(6, pairs)) >= 1


def test_group_pairs_joins_chains_and_drops_singletons() -> None:
    groups = group_pairs(6, [(0, 1, 0.95), (1, 3, 0.93), (4, 5, 0.99)])

    assert groups == [[0, 1, 3], [4, 5]]


def test_the_survivor_is_the_most_accessed_then_the_oldest_then_the_longest() -> None:
    young_used = DuplicateCandidate("a", access_count=5, timestamp=200.0, length=10)
    old = DuplicateCandidate("b", access_count=1, timestamp=100.0, length=10)
    old_long = DuplicateCandidate("c", access_count=1, timestamp=100.0, length=50)

    assert [m.id for m in survivor_first([old, old_long, young_used])] == ["a", "c", "b"]
    assert survivor_first([old, old_long])[0].id == "c"


def test_unit_rows_leaves_zero_vectors_at_zero() -> None:
    units = unit_rows(np.array([[3, 4], [0, 0]], dtype=np.float32))

    assert np.allclose(units, np.array([[0.6, 0.8], [0.0, 0.0]]))
