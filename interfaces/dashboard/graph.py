"""The graph page's data: a memory's neighbourhood as nodes and typed edges, bridges marked.

A bridge here is a memory that holds part of the neighbourhood to the rest: take it away and
some memories lose every path to the centre (an articulation point other than the centre).
Pure functions over plain values; the page draws what ``neighbourhood`` returns.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cognitive_memory.service import RelatedResult

__all__ = ["bridge_nodes", "neighbourhood"]

LABEL_CHARS = 60


def _label(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= LABEL_CHARS else flat[: LABEL_CHARS - 1] + "…"


def _edges(related: RelatedResult) -> list[dict[str, str]]:
    edges: dict[tuple[str, str, str], dict[str, str]] = {}
    for item in related.related:
        previous, current = item.path[-2], item.path[-1]
        source, target = (previous, current) if item.direction == "outgoing" else (current, previous)
        edges[(source, target, item.relation)] = {
            "id": f"{source}>{item.relation}>{target}",
            "source": source,
            "target": target,
            "relation": item.relation,
        }
    return list(edges.values())


def bridge_nodes(centre: str, nodes: Iterable[str], edges: Iterable[tuple[str, str]]) -> set[str]:
    """Nodes other than ``centre`` whose removal cuts some node off from ``centre``."""
    names = set(nodes) | {centre}
    adjacent: dict[str, set[str]] = {name: set() for name in names}
    for a, b in edges:
        adjacent.setdefault(a, set()).add(b)
        adjacent.setdefault(b, set()).add(a)
    everyone = _reachable(centre, adjacent, None)
    return {
        name for name in everyone - {centre} if len(_reachable(centre, adjacent, name)) < len(everyone) - 1
    }


def _reachable(start: str, adjacent: dict[str, set[str]], without: str | None) -> set[str]:
    seen, stack = {start}, [start]
    while stack:
        for nxt in adjacent[stack.pop()]:
            if nxt != without and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def neighbourhood(centre_id: str, centre_text: str, related: RelatedResult) -> dict[str, Any]:
    """``{"nodes": [...], "edges": [...], "truncated": bool}`` for cytoscape (``data`` only)."""
    edges = _edges(related)
    texts = {centre_id: centre_text} | {item.id: item.content for item in related.related}
    depth = {centre_id: 0} | {item.id: item.depth for item in related.related}
    bridges = bridge_nodes(centre_id, texts, [(e["source"], e["target"]) for e in edges])
    nodes = [
        {
            "id": node_id,
            "label": _label(text),
            "depth": depth[node_id],
            "kind": "centre" if node_id == centre_id else "bridge" if node_id in bridges else "memory",
        }
        for node_id, text in texts.items()
    ]
    return {"nodes": nodes, "edges": edges, "truncated": related.truncated}
