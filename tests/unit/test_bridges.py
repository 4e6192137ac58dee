"""Bridge math on hand-made unit vectors: novelty, connection potential, harmonic mean."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cognitive_memory.core.memory import Vector
from cognitive_memory.retrieval.bridges import bridge_score, score_bridges

SQRT_HALF = math.sqrt(0.5)


def unit(*components: float) -> Vector:
    vector = np.asarray(components, dtype=np.float32)
    return (vector / np.linalg.norm(vector)).astype(np.float32)


QUERY = unit(1, 0, 0)
ANCHOR = unit(1, 1, 0)


@pytest.mark.parametrize(
    ("novelty", "connection", "expected"),
    [
        pytest.param(0.5, 0.5, 0.5, id="equal-values"),
        pytest.param(1.0, 1.0, 1.0, id="both-perfect"),
        pytest.param(0.8, 0.4, 2 * 0.8 * 0.4 / 1.2, id="pulled-towards-the-smaller"),
        pytest.param(0.9, 0.1, 0.18, id="one-weak-side"),
    ],
)
def test_bridge_score_is_the_harmonic_mean(novelty: float, connection: float, expected: float) -> None:
    assert bridge_score(novelty, connection) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("novelty", "connection"),
    [
        pytest.param(0.0, 1.0, id="no-novelty"),
        pytest.param(1.0, 0.0, id="no-connection"),
        pytest.param(0.0, 0.0, id="neither"),
        pytest.param(-0.2, 0.7, id="negative-novelty"),
    ],
)
def test_bridge_score_is_zero_when_either_side_is_not_positive(novelty: float, connection: float) -> None:
    assert bridge_score(novelty, connection) == 0.0


def test_novelty_and_connection_are_measured_against_query_and_anchor() -> None:
    scores = score_bridges(QUERY, {"a": ANCHOR}, {"b": unit(0, 1, 0)}, threshold=0.0, limit=5)

    connection = SQRT_HALF  # cos((1,1,0)/sqrt2, (0,1,0))
    assert len(scores) == 1
    assert scores[0].memory_id == "b"
    assert scores[0].novelty_score == pytest.approx(1.0)  # orthogonal to the query
    assert scores[0].connection_potential == pytest.approx(connection)
    assert scores[0].bridge_score == pytest.approx(2 * connection / (1 + connection))
    assert scores[0].connected_to == "a"


def test_novelty_of_a_candidate_opposite_the_query_is_clipped_to_one() -> None:
    scores = score_bridges(QUERY, {"a": unit(0, 1, 0)}, {"b": unit(-1, 1, 0)}, threshold=0.0, limit=5)

    assert scores[0].novelty_score == 1.0  # 1 - cos = 1 + sqrt(0.5) before clipping
    assert scores[0].connection_potential == pytest.approx(SQRT_HALF)


def test_connection_to_an_anchor_pointing_away_is_clipped_to_zero() -> None:
    scores = score_bridges(QUERY, {"a": ANCHOR}, {"e": unit(-1, 0, 0)}, threshold=0.0, limit=5)

    assert scores[0].connection_potential == 0.0  # cos is -sqrt(0.5) before clipping
    assert scores[0].bridge_score == 0.0


def test_bridges_below_the_threshold_are_dropped_and_the_rest_sorted_best_first() -> None:
    candidates = {
        "orthogonal": unit(0, 0, 1),  # connection 0 -> score 0
        "same-as-query": unit(1, 0, 0),  # novelty 0 -> score 0
        "half-linked": unit(0, 1, 1),  # novelty 1, connection 0.5 -> 2/3
        "well-linked": unit(0, 1, 0),  # novelty 1, connection sqrt(0.5) -> 0.828
    }

    scores = score_bridges(QUERY, {"a": ANCHOR}, candidates, threshold=0.5, limit=10)

    assert [s.memory_id for s in scores] == ["well-linked", "half-linked"]
    assert scores[0].bridge_score == pytest.approx(2 * SQRT_HALF / (1 + SQRT_HALF))
    assert scores[1].bridge_score == pytest.approx(2 * 0.5 / 1.5)


def test_a_zero_threshold_keeps_every_candidate() -> None:
    candidates = {"orthogonal": unit(0, 0, 1), "well-linked": unit(0, 1, 0)}

    scores = score_bridges(QUERY, {"a": ANCHOR}, candidates, threshold=0.0, limit=10)

    assert [s.memory_id for s in scores] == ["well-linked", "orthogonal"]


def test_limit_keeps_only_the_best_bridges() -> None:
    candidates = {"half-linked": unit(0, 1, 1), "well-linked": unit(0, 1, 0)}

    scores = score_bridges(QUERY, {"a": ANCHOR}, candidates, threshold=0.0, limit=1)

    assert [s.memory_id for s in scores] == ["well-linked"]


def test_activated_memories_are_never_their_own_bridges() -> None:
    candidates = {"a": ANCHOR, "b": unit(0, 1, 0)}

    scores = score_bridges(QUERY, {"a": ANCHOR}, candidates, threshold=0.0, limit=10)

    assert [s.memory_id for s in scores] == ["b"]


def test_connected_to_names_the_closest_activated_memory() -> None:
    anchors = {"y-axis": unit(0, 1, 0), "z-axis": unit(0, 0, 1)}

    scores = score_bridges(QUERY, anchors, {"c": unit(0, 0.6, 0.8)}, threshold=0.0, limit=5)

    assert scores[0].connected_to == "z-axis"
    assert scores[0].connection_potential == pytest.approx(0.8)
    assert scores[0].bridge_score == pytest.approx(2 * 1.0 * 0.8 / 1.8)


@pytest.mark.parametrize(
    ("activated", "candidates", "limit"),
    [
        pytest.param({}, {"b": unit(0, 1, 0)}, 3, id="nothing-activated"),
        pytest.param({"a": ANCHOR}, {}, 3, id="no-candidates"),
        pytest.param({"a": ANCHOR}, {"b": unit(0, 1, 0)}, 0, id="zero-limit"),
    ],
)
def test_no_bridges_without_anchors_candidates_or_room(
    activated: dict[str, Vector], candidates: dict[str, Vector], limit: int
) -> None:
    assert score_bridges(QUERY, activated, candidates, threshold=0.0, limit=limit) == []
