"""Pure bridge math: memories far from the query yet close to what the query activated."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from cognitive_memory.core.memory import Vector

__all__ = ["BridgeScore", "bridge_score", "score_bridges"]


@dataclass(frozen=True, slots=True)
class BridgeScore:
    memory_id: str
    novelty_score: float
    connection_potential: float
    bridge_score: float
    connected_to: str


def bridge_score(novelty: float, connection: float) -> float:
    """The harmonic mean of novelty and connection potential: high only when both are."""
    if novelty <= 0.0 or connection <= 0.0:
        return 0.0
    return 2.0 * novelty * connection / (novelty + connection)


def score_bridges(
    query: Vector,
    activated: Mapping[str, Vector],
    candidates: Mapping[str, Vector],
    *,
    threshold: float,
    limit: int,
) -> list[BridgeScore]:
    """Score each candidate against the query and the activated memories; best first.

    novelty = 1 - cos(query, candidate), clipped to [0, 1];
    connection_potential = max over activated memories of cos(candidate, activated), clipped;
    bridge_score = harmonic mean of the two; kept when >= ``threshold``.
    """
    if not activated or not candidates or limit <= 0:
        return []
    anchor_ids = list(activated)
    anchors = np.stack([activated[i] for i in anchor_ids])
    scored = []
    for memory_id, vector in candidates.items():
        if memory_id in activated:
            continue
        novelty = float(np.clip(1.0 - float(query @ vector), 0.0, 1.0))
        links = anchors @ vector
        best = int(np.argmax(links))
        connection = float(np.clip(links[best], 0.0, 1.0))
        score = bridge_score(novelty, connection)
        if score >= threshold:
            scored.append(BridgeScore(memory_id, novelty, connection, score, anchor_ids[best]))
    scored.sort(key=lambda b: b.bridge_score, reverse=True)
    return scored[:limit]
