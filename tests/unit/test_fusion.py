"""Min-max fusion of meaning (cosine) and words (BM25)."""

from __future__ import annotations

import pytest

from cognitive_memory.retrieval.fusion import fuse, normalise


def test_normalise_scales_between_the_lowest_and_highest() -> None:
    assert normalise({"a": 0.2, "b": 0.6, "c": 0.4}) == pytest.approx({"a": 0.0, "b": 1.0, "c": 0.5})


def test_normalise_with_a_floor_keeps_the_floor_at_zero() -> None:
    assert normalise({"a": 2.0, "b": 8.0}, floor=0.0) == pytest.approx({"a": 0.25, "b": 1.0})


def test_normalise_gives_equal_or_single_scores_one() -> None:
    assert normalise({"only": 0.3}) == {"only": 1.0}
    assert normalise({"a": 0.5, "b": 0.5}) == {"a": 1.0, "b": 1.0}
    assert normalise({}) == {}


def test_fuse_weights_the_two_normalised_signals() -> None:
    semantic = {"a": 0.8, "b": 0.4, "c": 0.6}
    lexical = {"b": 10.0, "c": 5.0}
    fused = fuse(semantic, lexical, semantic_weight=0.5)
    # semantic min-max: a 1.0, b 0.0, c 0.5; lexical / max: b 1.0, c 0.5, a (no match) 0.0
    assert fused["a"] == pytest.approx((1.0, 0.0, 0.5))
    assert fused["b"] == pytest.approx((0.0, 1.0, 0.5))
    assert fused["c"] == pytest.approx((0.5, 0.5, 0.5))


def test_fuse_with_all_weight_on_meaning_ignores_words() -> None:
    fused = fuse({"a": 0.9, "b": 0.1}, {"b": 3.0}, semantic_weight=1.0)
    assert fused["a"][2] == pytest.approx(1.0)
    assert fused["b"][2] == pytest.approx(0.0)
