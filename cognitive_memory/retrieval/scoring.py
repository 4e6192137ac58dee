"""Pure ranking math: how a candidate's similarity and bookkeeping become one score."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["RankWeights", "ScoreBreakdown", "recency", "score_candidate"]


@dataclass(frozen=True, slots=True)
class RankWeights:
    """Weights of the terms added to similarity; documented in README (Ranking)."""

    importance: float = 0.05
    recency: float = 0.03
    strength: float = 0.02
    recency_half_life_days: float = 30.0
    session_lesson_boost: float = 1.1


@dataclass(frozen=True, slots=True)
class ScoreBreakdown:
    """Every component of a candidate's score, so a caller can see why it ranked where it did."""

    similarity: float
    importance: float
    recency: float
    strength: float
    lesson_boost: float
    total: float


def recency(age_days: float, half_life_days: float) -> float:
    """1.0 for a memory stored now, halving every ``half_life_days``."""
    return math.pow(0.5, max(age_days, 0.0) / half_life_days)


def score_candidate(
    similarity: float,
    *,
    importance: float,
    age_days: float,
    strength: float,
    is_session_lesson: bool,
    weights: RankWeights,
) -> ScoreBreakdown:
    """total = similarity x lesson boost + w_i*importance + w_r*recency + w_s*strength."""
    boost = weights.session_lesson_boost if is_session_lesson else 1.0
    fresh = recency(age_days, weights.recency_half_life_days)
    total = (
        similarity * boost
        + weights.importance * importance
        + weights.recency * fresh
        + weights.strength * strength
    )
    return ScoreBreakdown(similarity, importance, fresh, strength, boost, total)
