"""Pure activation spreading over the connection graph."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["pass_to_answers", "spread_activation"]

Graph = Mapping[str, Sequence[tuple[str, float]]]


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
            edges = sorted(graph.get(node, ()), key=lambda edge: edge[1], reverse=True)[:fan_out]
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


def pass_to_answers(
    activation: Mapping[str, float],
    relevance: Mapping[str, float],
    answers: Mapping[str, str],
    share: float,
) -> dict[str, float]:
    """Give the memory that answers a question ``share`` of the question's relevance.

    ``answers`` maps a memory that asks a question to the memory stored right after it in its
    session. A question that matches the query points at its answer, whose own words often do
    not (``What inspired the painting?`` is followed by ``A visit to the community center.``).
    An answer keeps the larger of its spread activation and ``share x relevance(question)``.
    """
    passed = dict(activation)
    for question, answer in answers.items():
        energy = share * relevance.get(question, 0.0)
        if answer != question and energy > passed.get(answer, 0.0):
            passed[answer] = energy
    return passed
