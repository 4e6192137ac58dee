"""Strength: how well a memory is held, rising with use and fading while it goes unused.

Computed at read time from what every memory already stores (its use count ``access_count``, the
time of its last use ``last_accessed`` or, never used, the time it was stored, its level and
whether it is a session lesson), so nothing runs in the background and a recall writes nothing
beyond the access it already records.

    peak     = 1 - (1 - BASE_STRENGTH) x (1 - USE_GAIN) ** uses
    strength = peak x 0.5 ** (idle_days / half_life)

A memory just stored holds ``BASE_STRENGTH`` (0.5); each use (recalled as core, opened with
get_memories, stored again as a duplicate) closes a tenth of the gap to 1.0, so the first uses
count most: 0.5, 0.55, 0.595, 0.635 ... 0.785 after eight, 0.94 after twenty. Strength follows
sustained use rather than a burst of recalls in one session (a larger gain ranked worse:
docs/recall-experiments.md). From its last use (or, never used, from
when it was stored) it halves every half-life of its level: concepts (L0) and session lessons
hold for half a year, contexts (L1) for a quarter, episodes (L2) a month, the same half-life as
recall's recency term, since a specific event is most useful while it is recent.
"""

from __future__ import annotations

import math
from datetime import datetime

from cognitive_memory.core.memory import CognitiveMemory, HierarchyLevel, SourceKind

__all__ = [
    "BASE_STRENGTH",
    "HALF_LIFE_DAYS",
    "LESSON_HALF_LIFE_DAYS",
    "USE_GAIN",
    "effective_strength",
    "half_life_days",
    "memory_strength",
]

BASE_STRENGTH = 0.5
USE_GAIN = 0.1
HALF_LIFE_DAYS: dict[int, float] = {
    HierarchyLevel.CONCEPT: 180.0,
    HierarchyLevel.CONTEXT: 90.0,
    HierarchyLevel.EPISODE: 30.0,
}
LESSON_HALF_LIFE_DAYS = 180.0
_SECONDS_PER_DAY = 86_400


def half_life_days(level: int, *, is_lesson: bool = False) -> float:
    """How many idle days halve a memory's strength: by level, and never shorter than a
    session lesson's for a lesson (lessons are meant to carry over to later sessions)."""
    days = HALF_LIFE_DAYS.get(level, HALF_LIFE_DAYS[HierarchyLevel.EPISODE])
    return max(days, LESSON_HALF_LIFE_DAYS) if is_lesson else days


def effective_strength(uses: int, idle_days: float, level: int, *, is_lesson: bool = False) -> float:
    """Strength in [0, 1] after ``uses`` uses and ``idle_days`` since the last one (or since the
    memory was stored): the peak its uses reached, halved every ``half_life_days`` of idleness.
    A last use in the future (clock skew) counts as now."""
    peak = 1.0 - (1.0 - BASE_STRENGTH) * math.pow(1.0 - USE_GAIN, max(uses, 0))
    fade = math.pow(0.5, max(idle_days, 0.0) / half_life_days(level, is_lesson=is_lesson))
    return min(max(peak * fade, 0.0), 1.0)


def memory_strength(memory: CognitiveMemory, now: datetime) -> float:
    """``effective_strength`` of a whole memory at ``now``."""
    last_used = memory.last_accessed or memory.timestamp
    idle_days = (now - last_used).total_seconds() / _SECONDS_PER_DAY
    return effective_strength(
        memory.access_count,
        idle_days,
        memory.hierarchy_level,
        is_lesson=memory.source is SourceKind.SESSION_LESSON,
    )
