"""Pure activation spreading over the connection graph."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import itemgetter

__all__ = ["spread_activation"]

Graph = Mapping[str, Sequence[tuple[str, float]]]

_WEIGHT = itemgetter(1)


def spread_activation(
    seeds: Mapping[str, float],
    graph: Graph,
    *,
    decay: float,
    max_depth: int,
    fan_out: int,
    threshold: float = 1e-3,
) -> dict[str, float]:
    """Activation each memory receives from the seeds, excluding the seeds' own scores.

    A seed with score ``s`` passes ``s x decay x w`` to a neighbour over an edge of weight ``w``;
    that neighbour passes on ``decay x w'`` of what it received, up to ``max_depth`` hops. Each
    node follows only its ``fan_out`` strongest edges, and activation below ``threshold`` stops.
    A node keeps the strongest activation that reached it (max, not sum), so a hub of weak links
    cannot outrank one strong association.
    """
    received: dict[str, float] = {}
    frontier = {node: score for node, score in seeds.items() if score > 0}
    for _ in range(max_depth):
        reached: dict[str, float] = {}
        for node, energy in frontier.items():
            edges = sorted(graph.get(node, ()), key=_WEIGHT, reverse=True)[:fan_out]
            for neighbour, weight in edges:
                passed = energy * decay * weight
                if passed >= threshold and passed > reached.get(neighbour, 0.0):
                    reached[neighbour] = passed
        frontier = {}
        for node, energy in reached.items():
            if energy > received.get(node, 0.0):
                received[node] = energy
                frontier[node] = energy
        if not frontier:
            break
    return received
