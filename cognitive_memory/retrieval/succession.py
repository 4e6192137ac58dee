"""Pure ordering rule for superseded memories: a memory never ranks above one that supersedes it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["successors_first"]


def successors_first(order: Sequence[str], superseded_by: Mapping[str, Sequence[str]]) -> list[str]:
    """``order`` with each memory moved right after the last of its successors in the list.

    ``superseded_by`` maps a memory to the memories that supersede it; successors outside
    ``order`` are ignored. Everything else keeps its relative order, and a chain (C supersedes B,
    B supersedes A) comes out newest first. Should the links ever form a cycle, its members keep
    their order at the end rather than vanish.
    """
    present = set(order)
    waiting_on = {
        memory_id: {s for s in superseded_by.get(memory_id, ()) if s in present and s != memory_id}
        for memory_id in order
    }
    placed: list[str] = []
    deferred: list[str] = []
    for memory_id in order:
        if waiting_on[memory_id]:
            deferred.append(memory_id)
            continue
        placed.append(memory_id)
        _release(memory_id, deferred, waiting_on, placed)
    return placed + deferred


def _release(done: str, deferred: list[str], waiting_on: dict[str, set[str]], placed: list[str]) -> None:
    """Place the deferred memories that waited only on ``done`` (and, in turn, those on them)."""
    ready = [done]
    while ready:
        successor = ready.pop(0)
        for memory_id in list(deferred):
            waiting_on[memory_id].discard(successor)
            if not waiting_on[memory_id]:
                deferred.remove(memory_id)
                placed.append(memory_id)
                ready.append(memory_id)
