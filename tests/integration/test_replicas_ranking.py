"""The ranking rows kept in memory (replicas/ranking.py) answer what the store answers, after every
kind of write, by this process or another, and fall back to the store when they cannot follow the
log."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import numpy as np
import pytest

from cognitive_memory.core.ranking import RankingRow
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.lifecycle import forgetting
from cognitive_memory.main import build_system
from cognitive_memory.replicas import FollowedRanking
from cognitive_memory.retrieval import Retriever
from cognitive_memory.service import MemoryService
from cognitive_memory.service.lifecycle import MemoryChanges
from cognitive_memory.service.remember import StoreContext
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem

pytestmark = pytest.mark.stores  # each test on SQLite and on PostgreSQL

NOTES = [
    "We moved the deploy to Mondays.",
    "Fridays left no one to fix a bad release.",
    "The staging database is restored every night.",
    "The on-call engineer restores it from the runbook.",
    "Billing retries webhooks three times.",
    "The retry delay doubles each time.",
]


def every_id(system: CognitiveSystem) -> list[str]:
    return sorted(m.id for batch in system.records.memories.batches() for m in batch)


def comparable(rows: list[RankingRow]) -> list[tuple[object, ...]]:
    return [(*row[:6], row.embedding.tobytes(), *row[7:]) for row in rows]


def assert_same_as_the_store(system: CognitiveSystem, ranking: FollowedRanking) -> None:
    system.flush()
    ids = [*every_id(system), "no-such-memory"]
    store = system.records.memories
    assert comparable(ranking.ranking_rows(ids)) == comparable(store.ranking_rows(ids))
    got, expected = ranking.vectors(ids), store.vectors(ids)
    assert got.keys() == expected.keys()
    assert all(np.array_equal(got[i], expected[i]) for i in got)


@pytest.fixture
def lived(hash_system: CognitiveSystem) -> Iterator[tuple[CognitiveSystem, list[str]]]:
    """A store of notes in two projects and a session, some of them recalled."""
    service = MemoryService(hash_system)
    for n, text in enumerate(NOTES):
        context = StoreContext(tags=[f"t{n % 3}"], speaker="Ana" if n % 3 == 0 else None)
        service.store_experience(text, context, project="ops" if n % 2 else None)
    for query in ("deploy Mondays", "staging restored", "webhook retries"):
        hash_system.retrieve(query, max_results=3)
    hash_system.flush()
    yield hash_system, every_id(hash_system)


def followed(system: CognitiveSystem) -> FollowedRanking:
    ranking = FollowedRanking(system.records, system.encoder.dimension)
    ranking.build()
    return ranking


def test_the_table_answers_each_memorys_row_and_vector_as_the_store_does(
    lived: tuple[CognitiveSystem, list[str]],
) -> None:
    system, ids = lived
    ranking = followed(system)

    assert ranking.ready and ranking.state == "following"
    rows = ranking.ranking_rows(ids[::-1])
    assert [row.id for row in rows] == ids[::-1]
    assert any(row.uses for row in rows)  # the recalls' bookkeeping is in it
    assert_same_as_the_store(system, ranking)
    assert ranking.ranking_rows([]) == [] and ranking.vectors([]) == {}
    with pytest.raises(ValueError, match="read-only"):
        rows[0].embedding[0] = 1.0


def test_after_every_kind_of_write_the_next_read_answers_as_the_store_does(
    lived: tuple[CognitiveSystem, list[str]],
) -> None:
    system, ids = lived
    service = MemoryService(system)
    ranking = followed(system)
    writes: list[Callable[[], object]] = [
        lambda: system.retrieve("Fridays release", max_results=4),
        lambda: service.store_experience("A new note about the deploy day.", StoreContext(tags=["new"])),
        lambda: service.update_memory(ids[0], MemoryChanges(text="The deploy moved to Tuesdays.")),
        lambda: service.update_memory(ids[1], MemoryChanges(importance_score=0.9, tags=["kept"])),
        lambda: forgetting.trash(system, [ids[2]], "forgotten", None),
        lambda: forgetting.restore(system, [ids[2]]),
        lambda: service.delete_memories([ids[3]]),
    ]
    for write in writes:
        write()
        assert_same_as_the_store(system, ranking)


@pytest.mark.parametrize("writer_first", [True, False], ids=["this-process-recalls", "other-process-recalls"])
def test_a_memory_written_by_another_process_is_in_the_very_next_recall(
    lived: tuple[CognitiveSystem, list[str]], store_of_record: str, writer_first: bool
) -> None:
    """Two systems on one data directory, each recalling from its tables: what one stores,
    updates and forgets, the other's very next recall reflects, whichever of them writes."""
    first, second = (
        build_system(Settings(env_file=None), encoder=HashEncoder(), follow_changes=True) for _ in range(2)
    )
    try:
        for replica in (*first.followed, *second.followed):
            replica.build()
        recaller, writer = (first, second) if writer_first else (second, first)
        _assert_recall_follows(recaller, MemoryService(writer))
    finally:
        second.close()
        first.close()


def _assert_recall_follows(recaller: CognitiveSystem, writer: MemoryService) -> None:
    assert recaller.followed and all(replica.ready for replica in recaller.followed)

    def found(query: str) -> dict[str, str]:
        result = recaller.retrieve(query, max_results=10, include_bridges=False)
        return {r.memory.id: r.memory.content for r in (*result.core, *result.peripheral)}

    stored = writer.store_experience("Quarterly invoices are mailed by the finance robot.").memory_id
    assert stored is not None
    assert stored in found("quarterly invoices finance robot")

    writer.update_memory(stored, MemoryChanges(text="Quarterly invoices are mailed by Priya in finance."))
    assert found("quarterly invoices Priya")[stored] == "Quarterly invoices are mailed by Priya in finance."

    writer.forget_memories([stored])
    assert stored not in found("quarterly invoices Priya")
    assert NOTES[0] in found("deploy Mondays").values()


def test_a_log_trimmed_past_the_table_sends_reads_to_the_store_and_builds_it_again(
    lived: tuple[CognitiveSystem, list[str]],
) -> None:
    system, ids = lived
    ranking = followed(system)
    for n in range(4):
        system.store(f"Another note, number {n}.")
    system.records.changes.trim(keep=2)

    rows = ranking.ranking_rows(every_id(system))  # the store answers while the table is built again

    assert comparable(rows) == comparable(system.records.memories.ranking_rows(every_id(system)))
    assert ranking.state == "degraded" or ranking.ready  # the thread may have finished already
    ranking.build()  # waits for the build on the thread, then builds once more
    assert ranking.ready and ranking.state == "following"
    assert_same_as_the_store(system, ranking)


def test_before_it_is_built_the_store_answers(lived: tuple[CognitiveSystem, list[str]]) -> None:
    system, ids = lived
    ranking = FollowedRanking(system.records, system.encoder.dimension)
    assert not ranking.ready and ranking.state == "building"
    assert_same_as_the_store(system, ranking)


def test_recall_with_the_rows_in_memory_ranks_as_it_does_with_the_stores(
    lived: tuple[CognitiveSystem, list[str]],
) -> None:
    system, _ = lived
    ranking = followed(system)
    store = system.retriever
    in_memory = Retriever(system.records, system.vectors, store.config, store.coverage, ranking=ranking)
    now = datetime(2026, 12, 6, tzinfo=UTC)
    for query in ("deploy day", "who restores staging", "retries of webhooks", "Mondays"):
        vector = system.encoder.encode([query])[0]
        expected = store.retrieve(query, vector, max_results=5, include_bridges=True, now=now)
        got = in_memory.retrieve(query, vector, max_results=5, include_bridges=True, now=now)
        assert got == expected


def test_a_serving_system_recalls_from_tables_it_built_at_start(store_of_record: str) -> None:
    system = build_system(Settings(env_file=None), encoder=HashEncoder(), follow_changes=True)
    try:
        for replica in system.followed:
            replica.build()
        names = {type(replica).__name__ for replica in system.followed}
        assert names == {"FollowedLinks", "FollowedRanking", "FollowedWords"}
        assert all(replica.state == "following" for replica in system.followed)
    finally:
        system.close()


def test_status_says_degraded_while_a_table_cannot_follow_the_log(
    store_of_record: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    system = build_system(Settings(env_file=None), encoder=HashEncoder(), follow_changes=True)
    try:
        service = MemoryService(system)
        for replica in system.followed:
            replica.build()
            # Held back, so the status is read before the table is built again.
            monkeypatch.setattr(replica, "build_in_background", lambda: None)
        for n in range(4):
            service.store_experience(f"Another note, number {n}.")
        assert service.show_status().system_status == "healthy"
        system.records.changes.trim(keep=2)

        recalled = service.retrieve_memories("another note", max_results=4)
        status = service.show_status(detailed=True)

        assert recalled.total_results == 4  # from the store, as fresh as ever
        assert status.system_status == "degraded"
        assert status.problem is not None and "ranking table" in status.problem
        assert status.configuration["recall_state"]["ranking table"] == "degraded"
    finally:
        system.close()
