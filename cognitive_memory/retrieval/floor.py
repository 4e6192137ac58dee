"""Pure rule of recall's relevance floor: what evidence a memory needs to enter an answer.

Ranking is relative (each signal is min-max scaled over the candidates), so a query about
something the store never mentions still ranks a best memory. The floor reads absolute evidence:

    evidence = cosine(query, memory) + word_weight x word share

(the word share is the rarity-weighted share of the query's words the memory's own text holds,
``storage/words.py``). A recall answer holds memories only when at least one memory reaches
``anchor``; then a memory enters it when its own evidence reaches ``floor`` or when memories that
passed pass it at least ``activation`` over its links (neighbours in time, co-recall, a file's
structure, user links, a question's answer). A core memory needs ``core``. A memory whose key the
query is as a whole (``named``) passes, and anchors the answer, whatever its evidence: its key's
words may be as common as ``notes``, and yet the caller named it. The values were chosen
on conversations (on-topic and off-topic questions) and checked on notes; docs/recall-experiments.md
has the measurements.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

__all__ = ["RelevanceFloor", "evidence", "passing"]


@dataclass(frozen=True, slots=True)
class RelevanceFloor:
    """The floor's weights and thresholds (docs/recall.md: the relevance floor)."""

    word_weight: float = 0.5
    anchor: float = 0.5
    floor: float = 0.3
    activation: float = 0.1
    core: float = 0.6
    enabled: bool = True


def evidence(similarity: float, word_share: float, word_weight: float) -> float:
    """A memory's own evidence of relevance: its cosine to the query plus its weighted word share."""
    return similarity + word_weight * word_share


def passing(
    own: Mapping[str, float],
    linked: Mapping[str, float],
    floor: RelevanceFloor,
    named: Collection[str] = (),
) -> frozenset[str] | None:
    """The memories that may enter the answer, given each one's own evidence and the activation
    passed to it by memories that passed on their own, and those the query names by their key
    (``named``, which pass whatever their evidence); None when the floor is off (all may)."""
    if not floor.enabled:
        return None
    if not named and not any(value >= floor.anchor for value in own.values()):
        return frozenset()
    direct = {memory_id for memory_id, value in own.items() if value >= floor.floor}
    through = {memory_id for memory_id, value in linked.items() if value >= floor.activation}
    return frozenset(direct | through | set(named))
