"""Ranking math: recency decay, the total score, and the core/peripheral split."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from cognitive_memory.core.memory import CognitiveMemory, HierarchyLevel, MemoryType
from cognitive_memory.retrieval.results import RankedMemory, split_core
from cognitive_memory.retrieval.scoring import RankWeights, ScoreBreakdown, key_lift, recency, score_candidate

DEFAULTS = RankWeights()


@pytest.mark.parametrize(
    ("age_days", "half_life_days", "expected"),
    [
        pytest.param(0.0, 30.0, 1.0, id="brand-new"),
        pytest.param(30.0, 30.0, 0.5, id="one-half-life"),
        pytest.param(60.0, 30.0, 0.25, id="two-half-lives"),
        pytest.param(45.0, 30.0, 0.5**1.5, id="one-and-a-half-half-lives"),
        pytest.param(7.0, 7.0, 0.5, id="other-half-life"),
        pytest.param(-3.0, 30.0, 1.0, id="future-timestamp-counts-as-new"),
    ],
)
def test_recency_halves_every_half_life(age_days: float, half_life_days: float, expected: float) -> None:
    assert recency(age_days, half_life_days) == pytest.approx(expected)


def test_total_adds_weighted_importance_recency_and_strength_to_similarity() -> None:
    score = score_candidate(
        0.8, importance=0.6, age_days=30.0, strength=1.0, is_session_lesson=False, weights=DEFAULTS
    )

    assert score.total == pytest.approx(0.8 + 0.05 * 0.6 + 0.03 * 0.5 + 0.02 * 1.0)


def test_a_session_lesson_multiplies_similarity_by_the_boost() -> None:
    score = score_candidate(
        0.8, importance=0.6, age_days=30.0, strength=1.0, is_session_lesson=True, weights=DEFAULTS
    )

    assert score.lesson_boost == 1.1
    assert score.total == pytest.approx(0.8 * 1.1 + 0.05 * 0.6 + 0.03 * 0.5 + 0.02 * 1.0)


def test_an_ordinary_memory_has_a_boost_of_one() -> None:
    score = score_candidate(
        0.8, importance=0.6, age_days=30.0, strength=1.0, is_session_lesson=False, weights=DEFAULTS
    )

    assert score.lesson_boost == 1.0


def test_custom_weights_change_the_total() -> None:
    weights = RankWeights(
        importance=0.1, recency=0.2, strength=0.3, recency_half_life_days=10.0, session_lesson_boost=2.0
    )

    score = score_candidate(
        0.5, importance=1.0, age_days=20.0, strength=0.5, is_session_lesson=True, weights=weights
    )

    assert score.total == pytest.approx(0.5 * 2.0 + 0.1 * 1.0 + 0.2 * 0.25 + 0.3 * 0.5)


def test_the_breakdown_keeps_every_component_unboosted() -> None:
    score = score_candidate(
        0.7, importance=0.9, age_days=60.0, strength=0.4, is_session_lesson=True, weights=DEFAULTS
    )

    assert (score.similarity, score.importance, score.strength) == (0.7, 0.9, 0.4)
    assert score.recency == pytest.approx(0.25)
    assert score.lesson_boost == 1.1


def test_a_named_speaker_adds_its_weight_to_relevance_before_the_lesson_boost() -> None:
    weights = RankWeights(importance=0.0, recency=0.0, strength=0.0, speaker=0.25, session_lesson_boost=2.0)
    common = {"importance": 0.5, "age_days": 0.0, "strength": 1.0, "weights": weights, "relevance": 0.5}
    named = score_candidate(0.4, is_session_lesson=True, speaker_named=True, activation=0.1, **common)
    assert named.speaker == 0.25
    assert named.total == pytest.approx((0.5 + 0.1 + 0.25) * 2.0)
    plain = score_candidate(0.4, is_session_lesson=False, **common)
    assert plain.speaker == 0.0
    assert plain.total == pytest.approx(0.5)


def _ranked(*totals: float) -> list[RankedMemory]:
    now = datetime(2024, 5, 1, tzinfo=UTC)
    return [
        RankedMemory(
            CognitiveMemory(f"m{rank}", "text", HierarchyLevel.CONTEXT, MemoryType.SEMANTIC, now, now),
            ScoreBreakdown(total, total, 0.0, total, 0.0, 0.0, 0.5, 1.0, 1.0, 1.0, total),
            rank,
        )
        for rank, total in enumerate(totals, start=1)
    ]


@pytest.mark.parametrize(
    ("totals", "core_ratio", "expected"),
    [
        pytest.param((), 0.8, 0, id="empty"),
        pytest.param((0.9,), 0.8, 1, id="single"),
        pytest.param((1.0, 0.9, 0.8, 0.7), 0.8, 3, id="bar-inclusive"),
        pytest.param((1.0, 0.5, 0.9), 0.8, 1, id="only-leading-results"),
        pytest.param((0.6, 0.6, 0.6), 0.8, 3, id="all-equal"),
        pytest.param((1.0, 0.99), 1.5, 1, id="at-least-one-even-above-the-best"),
        pytest.param((1.0, 0.2, 0.1), 0.0, 3, id="zero-ratio-takes-all"),
    ],
)
def test_core_is_the_leading_results_within_the_ratio_of_the_best(
    totals: tuple[float, ...], core_ratio: float, expected: int
) -> None:
    assert split_core(_ranked(*totals), core_ratio) == expected


@pytest.mark.parametrize(
    ("evidences", "expected"),
    [
        pytest.param((0.7, 0.65, 0.6), 3, id="all-strong"),
        pytest.param((0.7, 0.5, 0.9), 1, id="stops-at-the-first-weak-one"),
        pytest.param((0.55, 0.9, 0.9), 0, id="even-the-best-needs-evidence"),
    ],
)
def test_core_needs_its_own_evidence_of_relevance(evidences: tuple[float, ...], expected: int) -> None:
    ranked = [
        replace(r, score=r.score._replace(evidence=e))
        for r, e in zip(_ranked(1.0, 1.0, 1.0), evidences, strict=True)
    ]
    assert split_core(ranked, 0.8, core_evidence=0.6) == expected


def test_a_core_memory_named_by_its_key_needs_no_evidence() -> None:
    (named, other) = _ranked(1.0, 0.9)
    ranked = [
        replace(named, score=named.score._replace(evidence=0.1, key=0.3)),
        replace(other, score=other.score._replace(evidence=0.9)),
    ]
    assert split_core(ranked, 0.8, core_evidence=0.6) == 2


@pytest.mark.parametrize(
    ("total", "best_other", "lift"),
    [
        pytest.param(0.4, 1.2, 0.9, id="behind-lifts-past-the-best-by-the-lead"),
        pytest.param(1.5, 1.2, 0.1, id="ahead-still-shows-the-lead"),
        pytest.param(0.2, 0.0, 0.1, id="alone"),
    ],
)
def test_a_memory_named_by_its_key_is_lifted_to_lead_the_best_other(
    total: float, best_other: float, lift: float
) -> None:
    weights = RankWeights(key_lead=0.1)
    assert key_lift(total, best_other, weights) == pytest.approx(lift)
    assert total + key_lift(total, best_other, weights) >= best_other + 0.1 - 1e-9
