"""Pure fusion of the two candidate signals (meaning and words) into one relevance.

Min-max normalising each signal over the candidates and averaging them ranks better than
reciprocal-rank fusion on the benchmarks (docs/recall-experiments.md).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["fuse", "normalise"]


def normalise(scores: Mapping[str, float], floor: float | None = None) -> dict[str, float]:
    """Min-max scale to [0, 1]; ``floor`` overrides the minimum (0 for BM25, which has no match below it).

    A single candidate, or candidates all scoring alike, scale to 1.0.
    """
    if not scores:
        return {}
    high = max(scores.values())
    low = min(scores.values()) if floor is None else floor
    span = high - low
    if span <= 1e-12:
        return dict.fromkeys(scores, 1.0)
    return {key: max(0.0, (value - low) / span) for key, value in scores.items()}


def fuse(
    semantic: Mapping[str, float], lexical: Mapping[str, float], semantic_weight: float
) -> dict[str, tuple[float, float, float]]:
    """For every candidate: (semantic share, lexical share, relevance), each in [0, 1].

    ``semantic`` holds cosine similarities for every candidate; ``lexical`` holds BM25 scores for
    the candidates the words matched (the others count 0).
    """
    dense = normalise(semantic)
    words = normalise(lexical, floor=0.0)
    fused = {}
    for key in dense:
        s, w = dense[key], words.get(key, 0.0)
        fused[key] = (s, w, semantic_weight * s + (1.0 - semantic_weight) * w)
    return fused
