"""Strength: rises with use (less with each use), fades with idle time by level, stays in [0, 1]."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from cognitive_memory.core.memory import CognitiveMemory, HierarchyLevel, MemoryType, SourceKind
from cognitive_memory.core.strength import (
    BASE_STRENGTH,
    HALF_LIFE_DAYS,
    LESSON_HALF_LIFE_DAYS,
    effective_strength,
    half_life_days,
    memory_strength,
)

CONCEPT, CONTEXT, EPISODE = HierarchyLevel.CONCEPT, HierarchyLevel.CONTEXT, HierarchyLevel.EPISODE
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_a_memory_just_stored_holds_the_base_strength() -> None:
    assert effective_strength(0, 0.0, EPISODE) == BASE_STRENGTH


def test_each_use_raises_strength_by_less_than_the_one_before() -> None:
    values = [effective_strength(uses, 0.0, CONTEXT) for uses in range(12)]
    gains = [later - earlier for earlier, later in zip(values, values[1:], strict=False)]

    assert all(gain > 0 for gain in gains)
    assert all(later < earlier for earlier, later in zip(gains, gains[1:], strict=False))
    assert values[1] == pytest.approx(0.55)
    assert values[0] < values[11] < 1.0


def test_strength_halves_every_half_life_of_idleness() -> None:
    for level in (CONCEPT, CONTEXT, EPISODE):
        days = HALF_LIFE_DAYS[level]
        assert effective_strength(3, days, level) == pytest.approx(effective_strength(3, 0.0, level) / 2)
        assert effective_strength(3, 2 * days, level) == pytest.approx(effective_strength(3, 0.0, level) / 4)


def test_episodes_fade_fastest_and_concepts_slowest() -> None:
    after_60_days = [effective_strength(2, 60.0, level) for level in (CONCEPT, CONTEXT, EPISODE)]

    assert after_60_days[0] > after_60_days[1] > after_60_days[2]
    assert half_life_days(CONCEPT) > half_life_days(CONTEXT) > half_life_days(EPISODE)


def test_a_session_lesson_fades_as_slowly_as_a_concept_whatever_its_level() -> None:
    assert half_life_days(EPISODE, is_lesson=True) == LESSON_HALF_LIFE_DAYS
    lesson = effective_strength(1, 90.0, EPISODE, is_lesson=True)
    assert lesson > effective_strength(1, 90.0, EPISODE)
    assert lesson == pytest.approx(effective_strength(1, 90.0, CONCEPT))


@pytest.mark.parametrize("uses", [0, 1, 10, 1000, 10**6, -3])
@pytest.mark.parametrize("idle_days", [-5.0, 0.0, 1.0, 365.0, 1e6])
def test_strength_stays_between_zero_and_one(uses: int, idle_days: float) -> None:
    for level in (CONCEPT, CONTEXT, EPISODE):
        assert 0.0 <= effective_strength(uses, idle_days, level) <= 1.0


def test_a_last_use_in_the_future_counts_as_now() -> None:
    assert effective_strength(2, -10.0, EPISODE) == effective_strength(2, 0.0, EPISODE)


def _memory(
    level: HierarchyLevel, uses: int, last_accessed: datetime | None, loader_type: str | None = None
) -> CognitiveMemory:
    return CognitiveMemory(
        id="m",
        content="text",
        hierarchy_level=level,
        memory_type=MemoryType.SEMANTIC,
        created_date=T0,
        timestamp=T0,
        last_accessed=last_accessed,
        access_count=uses,
        cognitive_embedding=np.zeros(3, dtype=np.float32),
        source=SourceKind.of(loader_type),
    )


def test_a_memory_never_used_decays_from_when_it_was_stored() -> None:
    memory = _memory(EPISODE, 0, None)

    assert memory_strength(memory, T0 + timedelta(days=30)) == pytest.approx(BASE_STRENGTH / 2)


def test_a_used_memory_decays_from_its_last_use() -> None:
    memory = _memory(CONTEXT, 4, T0 + timedelta(days=100))
    now = T0 + timedelta(days=100 + 90)

    assert memory_strength(memory, now) == pytest.approx(effective_strength(4, 0.0, CONTEXT) / 2)


def test_a_memory_loaded_as_a_session_lesson_counts_as_a_lesson() -> None:
    lesson = _memory(EPISODE, 1, T0, loader_type="session_lesson")
    now = T0 + timedelta(days=LESSON_HALF_LIFE_DAYS)

    assert memory_strength(lesson, now) == pytest.approx(effective_strength(1, 0.0, EPISODE) / 2)
