"""Exact nearest-neighbour search over vectors read from SQLite (under a session filter)."""

from __future__ import annotations

import numpy as np

from cognitive_memory.retrieval.exact import nearest


def test_the_nearest_come_first_and_at_most_limit_of_them() -> None:
    vectors = {
        "far": np.array([0.0, 1.0], dtype=np.float32),
        "near": np.array([1.0, 0.0], dtype=np.float32),
        "between": np.array([0.6, 0.8], dtype=np.float32),
    }

    hits = nearest(vectors, np.array([1.0, 0.0], dtype=np.float32), 2)

    assert [hit.id for hit in hits] == ["near", "between"]
    assert [round(hit.score, 3) for hit in hits] == [1.0, 0.6]
    assert nearest({}, np.array([1.0, 0.0], dtype=np.float32), 5) == []
