"""Pure ranking math: how a candidate's relevance, association and bookkeeping become one score."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["RankWeights", "ScoreBreakdown", "key_lift", "recency", "score_candidate", "word_bonus"]


@dataclass(frozen=True, slots=True)
class RankWeights:
    """Weights of the terms added to relevance; documented in docs/recall.md (Ranking)."""

    importance: float = 0.05
    recency: float = 0.03
    strength: float = 0.02
    speaker: float = 0.1
    words: float = 0.3
    words_from: float = 0.5
    recency_half_life_days: float = 30.0
    session_lesson_boost: float = 1.1
    key_lead: float = 0.1


class ScoreBreakdown(NamedTuple):
    """Every component of a memory's score, so a caller can see why it ranked where it did (a
    named tuple, immutable: a recall scores about a hundred candidates, and a frozen dataclass
    took 2.6 us to make against 0.6 us).

    ``similarity`` is the cosine to the query; ``semantic`` and ``lexical`` are the candidate's
    normalised meaning and word scores, fused into ``relevance``; ``activation`` is what spread to
    it from related candidates over the connection graph; ``speaker`` is the boost it got because
    the query names who said it. ``words`` (the rarity-weighted share of the query's words the
    memory holds), ``evidence`` (cosine plus weighted word share) and ``linked`` (activation from
    memories that passed the relevance floor) are what the floor read (retrieval/floor.py);
    ``total`` includes the word bonus (``word_bonus``) recall adds once the floor is applied, and
    ``key``, what a memory whose key the query is as a whole gains to rank first (``key_lift``).
    """

    similarity: float
    semantic: float
    lexical: float
    relevance: float
    activation: float
    speaker: float
    importance: float
    recency: float
    strength: float
    lesson_boost: float
    total: float
    words: float = 0.0
    evidence: float = 0.0
    linked: float = 0.0
    key: float = 0.0


def key_lift(total: float, best_other: float, weights: RankWeights) -> float:
    """What a memory named by its key (the whole query is its key) adds to its ``total`` to rank
    first: enough to lead the best other memory (``best_other``) by ``weights.key_lead``, and
    never less than that lead, so a named memory always shows a lift."""
    return max(weights.key_lead, best_other + weights.key_lead - total)


def word_bonus(word_share: float, weights: RankWeights) -> float:
    """``weights.words`` x how far the memory's word share passes ``weights.words_from``, scaled so
    that holding every query word earns the whole weight: a memory that holds most of the query's
    rare words (a note's own wording of what the query asks) moves up; a partial match earns nothing."""
    if weights.words <= 0 or word_share <= weights.words_from:
        return 0.0
    return weights.words * (word_share - weights.words_from) / (1.0 - weights.words_from)


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
    semantic: float | None = None,
    lexical: float = 0.0,
    relevance: float | None = None,
    activation: float = 0.0,
    speaker_named: bool = False,
) -> ScoreBreakdown:
    """total = (relevance + activation + speaker) x lesson boost + w_i*importance + w_r*recency
    + w_s*strength.

    Without a fused ``relevance`` the similarity stands in for it (and for ``semantic``);
    ``speaker`` is ``weights.speaker`` when ``speaker_named`` (the query names who said the memory).
    """
    boost = weights.session_lesson_boost if is_session_lesson else 1.0
    fresh = recency(age_days, weights.recency_half_life_days)
    base = similarity if relevance is None else relevance
    named = weights.speaker if speaker_named else 0.0
    total = (
        (base + activation + named) * boost
        + weights.importance * importance
        + weights.recency * fresh
        + weights.strength * strength
    )
    return ScoreBreakdown(
        similarity=similarity,
        semantic=similarity if semantic is None else semantic,
        lexical=lexical,
        relevance=base,
        activation=activation,
        speaker=named,
        importance=importance,
        recency=fresh,
        strength=strength,
        lesson_boost=boost,
        total=total,
    )
