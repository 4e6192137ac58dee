"""The links kept in memory (replicas/links.py) answer what the store answers, after every kind of
write, by this process or another, and fall back to the store when they cannot follow the log."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from cognitive_memory import linking
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.lifecycle import forgetting
from cognitive_memory.main import build_system
from cognitive_memory.replicas import FollowedLinks
from cognitive_memory.retrieval import Retriever
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem

pytestmark = pytest.mark.stores  # each test on SQLite and on PostgreSQL

TURNS = [
    "We moved the deploy to Mondays.",
    "Why Mondays and not Fridays?",
    "Fridays left no one to fix a bad release.",
    "The staging database is restored every night.",
    "Who restores it when the job fails?",
    "The on-call engineer, from the runbook.",
    "Billing retries webhooks three times.",
    "The retry delay doubles each time.",
]


def every_id(system: CognitiveSystem) -> list[str]:
    return sorted(m.id for batch in system.records.memories.batches() for m in batch)


def assert_same_as_the_store(system: CognitiveSystem, links: FollowedLinks) -> None:
    system.flush()
    ids = every_id(system)
    assert links.neighbourhood(ids) == system.records.links.neighbourhood(ids)


@pytest.fixture
def lived(hash_system: CognitiveSystem) -> Iterator[tuple[CognitiveSystem, list[str]]]:
    """A store with links in time (two sessions), a user link and co-recall links."""
    ids = [hash_system.store(text, session_id=f"s-{n // 3}").memory.id for n, text in enumerate(TURNS)]
    linking.link(hash_system.records, ids[0], ids[3], "relates_to")
    for query in ("deploy Mondays", "staging restored", "webhook retries"):
        hash_system.retrieve(query, max_results=3)
    hash_system.flush()
    yield hash_system, ids


def test_the_table_answers_each_memorys_neighbourhood_as_the_store_does(
    lived: tuple[CognitiveSystem, list[str]],
) -> None:
    system, ids = lived
    links = FollowedLinks(system.records)
    links.build()

    assert links.ready
    graph, timeless = links.neighbourhood(ids)
    assert graph and timeless and graph != timeless  # links in time are in one only
    assert_same_as_the_store(system, links)
    assert links.neighbourhood([]) == ({}, {})


def test_after_every_kind_of_write_the_next_read_answers_as_the_store_does(
    lived: tuple[CognitiveSystem, list[str]],
) -> None:
    system, ids = lived
    links = FollowedLinks(system.records)
    links.build()
    writes = [
        lambda: linking.link(system.records, ids[1], ids[6], "contradicts"),
        lambda: linking.unlink(system.records, ids[0], ids[3]),
        lambda: system.retrieve("Fridays release", max_results=4),
        lambda: system.store("A new turn about the deploy day.", session_id="s-2"),
        lambda: forgetting.trash(system, [ids[4]], "forgotten", None),
        lambda: forgetting.restore(system, [ids[4]]),
        lambda: linking.link(system.records, ids[2], ids[5], "depends_on", weight=0.35),
        lambda: linking.link(system.records, ids[2], ids[5], "depends_on", weight=0.9),
        lambda: linking.link(system.records, ids[5], ids[2], "blocks_release", weight=0.6),
        lambda: linking.link(system.records, ids[3], ids[7], "similar", weight=0.0),
        lambda: forgetting.trash(system, [ids[5]], "forgotten", None),
        lambda: forgetting.restore(system, [ids[5]]),
    ]
    for write in writes:
        write()
        assert_same_as_the_store(system, links)
    rebuilt = FollowedLinks(system.records)
    rebuilt.build()
    assert_same_as_the_store(system, rebuilt)
    graph = system.records.links.neighbourhood([ids[2], ids[3]])[0]
    assert dict(graph[ids[2]])[ids[5]] == 0.9  # the stronger of its two links, after the restore
    assert ids[7] not in dict(graph[ids[3]])  # a link of weight 0 lifts nothing


def test_a_link_written_by_another_process_is_in_the_very_next_read(
    lived: tuple[CognitiveSystem, list[str]], store_of_record: str
) -> None:
    system, ids = lived
    links = FollowedLinks(system.records)
    links.build()
    before = links.neighbourhood([ids[2]])[0].get(ids[2], [])

    other = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        linking.link(other.records, ids[2], ids[7], "caused_by")
    finally:
        other.close()

    after = links.neighbourhood([ids[2]])[0][ids[2]]
    assert ids[7] not in dict(before) and ids[7] in dict(after)
    assert_same_as_the_store(system, links)


def test_a_log_trimmed_past_the_table_sends_reads_to_the_store_and_builds_it_again(
    lived: tuple[CognitiveSystem, list[str]],
) -> None:
    system, ids = lived
    links = FollowedLinks(system.records)
    links.build()
    for n in range(4):
        system.store(f"Another turn, number {n}.", session_id="s-9")
    system.records.changes.trim(keep=2)

    graph, _ = links.neighbourhood(ids)  # answered by the store while the table is built again

    assert graph == system.records.links.neighbourhood(ids)[0]
    links.build()  # waits for the build on the thread, then builds once more
    assert links.ready
    assert_same_as_the_store(system, links)


def test_before_it_is_built_the_store_answers(lived: tuple[CognitiveSystem, list[str]]) -> None:
    system, ids = lived
    links = FollowedLinks(system.records)
    assert not links.ready
    assert links.neighbourhood(ids) == system.records.links.neighbourhood(ids)


def test_recall_with_the_links_in_memory_ranks_as_it_does_with_the_stores(
    lived: tuple[CognitiveSystem, list[str]],
) -> None:
    system, _ = lived
    links = FollowedLinks(system.records)
    links.build()
    store = system.retriever
    followed = Retriever(system.records, system.vectors, store.config, store.coverage, links=links)
    now = datetime(2026, 12, 6, tzinfo=UTC)
    for query in ("deploy day", "who restores staging", "retries of webhooks", "Mondays"):
        vector = system.encoder.encode([query])[0]
        expected = store.retrieve(query, vector, max_results=5, include_bridges=True, now=now)
        got = followed.retrieve(query, vector, max_results=5, include_bridges=True, now=now)
        assert got == expected
