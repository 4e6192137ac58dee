"""Activation spreading on small hand-made graphs."""

from __future__ import annotations

import pytest

from cognitive_memory.retrieval.activation import spread_activation

CHAIN = {
    "a": [("b", 1.0)],
    "b": [("a", 1.0), ("c", 0.5)],
    "c": [("b", 0.5), ("d", 1.0)],
    "d": [("c", 1.0)],
}


def test_one_hop_passes_score_times_decay_times_weight() -> None:
    reached = spread_activation({"a": 1.0}, CHAIN, decay=0.3, max_depth=1, fan_out=8)
    assert reached == {"b": pytest.approx(0.3)}


def test_each_hop_decays_again_and_depth_bounds_the_walk() -> None:
    reached = spread_activation({"a": 1.0}, CHAIN, decay=0.5, max_depth=3, fan_out=8)
    # a -> b: 0.5; b -> c: 0.5 * 0.5 * 0.5 = 0.125; c -> d: 0.125 * 0.5 * 1.0 = 0.0625
    assert reached["b"] == pytest.approx(0.5)
    assert reached["c"] == pytest.approx(0.125)
    assert reached["d"] == pytest.approx(0.0625)
    shallow = spread_activation({"a": 1.0}, CHAIN, decay=0.5, max_depth=2, fan_out=8)
    assert "d" not in shallow


def test_activation_flowing_back_to_a_seed_is_reported_for_it() -> None:
    reached = spread_activation({"a": 1.0, "b": 0.4}, CHAIN, decay=0.5, max_depth=1, fan_out=8)
    # b receives 1.0 * 0.5 from a; a receives 0.4 * 0.5 from b; c receives 0.4 * 0.5 * 0.5
    assert reached == {"b": pytest.approx(0.5), "a": pytest.approx(0.2), "c": pytest.approx(0.1)}


def test_a_node_keeps_its_strongest_activation_not_the_sum() -> None:
    hub = {"s1": [("x", 1.0)], "s2": [("x", 1.0)], "s3": [("x", 1.0)]}
    reached = spread_activation({"s1": 0.9, "s2": 0.8, "s3": 0.7}, hub, decay=0.5, max_depth=1, fan_out=8)
    assert reached == {"x": pytest.approx(0.45)}


def test_fan_out_follows_only_the_strongest_edges() -> None:
    star = {"s": [("weak", 0.1), ("strong", 0.9), ("middle", 0.5)]}
    reached = spread_activation({"s": 1.0}, star, decay=1.0, max_depth=1, fan_out=2)
    assert set(reached) == {"strong", "middle"}


def test_activation_below_the_threshold_stops() -> None:
    reached = spread_activation({"a": 1.0}, CHAIN, decay=0.1, max_depth=3, fan_out=8, threshold=0.02)
    # a -> b 0.1; then b -> a 0.1 * 0.1 * 1.0 = 0.01 and b -> c 0.005, both below 0.02
    assert reached == {"b": pytest.approx(0.1)}


def test_seeds_with_no_score_or_no_edges_spread_nothing() -> None:
    assert spread_activation({"a": 0.0}, CHAIN, decay=0.5, max_depth=2, fan_out=8) == {}
    assert spread_activation({"lonely": 1.0}, CHAIN, decay=0.5, max_depth=2, fan_out=8) == {}
