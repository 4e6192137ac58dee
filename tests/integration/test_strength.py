"""Strength through the facade: core recalls and opens raise it, idle time lowers it, with a clock
the test moves."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cognitive_memory.core.strength import BASE_STRENGTH, effective_strength
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.index import ArrayVectorStore
from cognitive_memory.retrieval import RetrievalConfig, Retriever
from cognitive_memory.service import MemoryOut, MemoryService, ScoreOut
from cognitive_memory.storage import SQLiteMemoryStore
from cognitive_memory.system import CognitiveSystem

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
RECALLED = "The deploy script reads the AWS profile from the environment"
IGNORED = "Tomato sauce wants fresh basil and a long simmer"


class Clock:
    """The time the system reads; the test moves it."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def service(tmp_path: Path, clock: Clock) -> Iterator[MemoryService]:
    memories = SQLiteMemoryStore(tmp_path / "memories.db")
    vectors = ArrayVectorStore(HashEncoder().dimension)
    system = CognitiveSystem(
        memories, vectors, HashEncoder(), Retriever(memories, vectors, RetrievalConfig()), clock=clock
    )
    yield MemoryService(system)
    system.close()


def _strengths(service: MemoryService, *ids: str) -> list[float]:
    service.system.flush()
    return [record.strength for record in service.get_memories(ids).memories]


def _store(service: MemoryService, text: str) -> str:
    return service.system.store(text, hierarchy_level=1).memory.id


def test_a_memory_recalled_often_as_core_is_stronger_than_one_never_recalled(
    service: MemoryService, clock: Clock
) -> None:
    recalled, ignored = _store(service, RECALLED), _store(service, IGNORED)
    for day in range(1, 6):
        clock.now = T0 + timedelta(days=day)
        result = service.system.retrieve(RECALLED, max_results=1, include_bridges=False)
        assert [ranked.memory.id for ranked in result.core] == [recalled]
    service.system.flush()
    clock.now = T0 + timedelta(days=6)

    strong, weak = (service.get_memories([memory_id]).memories[0] for memory_id in (recalled, ignored))

    assert strong.access_count == 5 and weak.access_count == 0
    assert strong.strength == pytest.approx(effective_strength(5, 1.0, 1))
    assert weak.strength == pytest.approx(effective_strength(0, 6.0, 1))
    assert strong.strength > BASE_STRENGTH > weak.strength


def test_opening_a_memory_counts_as_a_use(service: MemoryService, clock: Clock) -> None:
    opened, other = _store(service, RECALLED), _store(service, IGNORED)
    for _ in range(3):
        service.get_memories([opened])
    service.system.flush()

    records = service.get_memories([opened, other]).memories

    assert [r.access_count for r in records] == [3, 0]  # this read counts only after answering
    assert records[0].strength > records[1].strength == BASE_STRENGTH


def test_strength_fades_while_a_memory_goes_unused(service: MemoryService, clock: Clock) -> None:
    memory_id = _store(service, RECALLED)
    (fresh,) = _strengths(service, memory_id)
    clock.now = T0 + timedelta(days=90)  # one context half-life after that open

    (faded,) = _strengths(service, memory_id)

    assert fresh == BASE_STRENGTH
    assert faded == pytest.approx(effective_strength(1, 0.0, 1) / 2)  # one use, then half gone
    assert faded < fresh


def test_recall_ranks_and_reports_the_same_strength(service: MemoryService, clock: Clock) -> None:
    memory_id = _store(service, RECALLED)
    service.get_memories([memory_id])
    service.system.flush()
    clock.now = T0 + timedelta(days=10)

    answer = service.retrieve_memories(RECALLED, ["core"], 1, False)
    core = answer.memories.core[0]

    assert isinstance(core, MemoryOut) and isinstance(core.score, ScoreOut)
    assert core.id == memory_id
    assert core.strength == core.score.strength == pytest.approx(effective_strength(1, 10.0, 1))
