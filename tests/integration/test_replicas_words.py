"""The query's word counts kept in memory (replicas/words.py) and the filter the ranking table
tells (replicas/ranking.py): recall searches before it reads the store, and ranks as it does
reading the query from the store, after writes by this process or another."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime

import pytest

from cognitive_memory.encoding import HashEncoder
from cognitive_memory.index.vector_store import VectorFilter
from cognitive_memory.main import build_system
from cognitive_memory.replicas import FollowedRanking, FollowedWords
from cognitive_memory.retrieval import Retriever
from cognitive_memory.service import MemoryService
from cognitive_memory.service.remember import StoreContext
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem
from tests.integration.test_replicas_ranking import NOTES

pytestmark = pytest.mark.stores  # each test on SQLite and on PostgreSQL

# Words held by one memory are rare (spelling.RARE): they are corrected, so read from the store.
QUERIES = [
    "deploy day",
    "who restores staging",
    "retries of webhooks",
    "Mondays",
    "stagng databse",
    "restores retries",
]
NOW = datetime(2026, 12, 7, tzinfo=UTC)


@pytest.fixture
def pair(store_of_record: str) -> Iterator[tuple[CognitiveSystem, CognitiveSystem]]:
    """Two systems on one data directory, the first recalling with its state in memory, built."""
    first, second = (
        build_system(Settings(env_file=None), encoder=HashEncoder(), follow_changes=True) for _ in range(2)
    )
    service = MemoryService(first)
    for n, text in enumerate(NOTES):
        service.store_experience(text, StoreContext(tags=[f"t{n % 3}"]), project="ops" if n % 2 else None)
    first.flush()
    for replica in first.followed:
        replica.build()
    yield first, second
    second.close()
    first.close()


def from_the_store(system: CognitiveSystem) -> Retriever:
    """A retriever reading everything from the store, as a one-shot command does."""
    kept = system.retriever
    return Retriever(system.records, system.vectors, kept.config, kept.coverage)


def assert_ranks_as_the_store(
    system: CognitiveSystem, where: VectorFilter | None, queries: Sequence[str] = QUERIES
) -> None:
    store = from_the_store(system)
    for query in queries:
        vector = system.encoder.encode([query])[0]
        expected = store.retrieve(query, vector, max_results=5, include_bridges=True, now=NOW, where=where)
        got = system.retriever.retrieve(
            query, vector, max_results=5, include_bridges=True, now=NOW, where=where
        )
        assert got == expected, query


def words_of(system: CognitiveSystem) -> FollowedWords:
    (words,) = [replica for replica in system.followed if isinstance(replica, FollowedWords)]
    return words


def ranking_of(system: CognitiveSystem) -> FollowedRanking:
    (ranking,) = [replica for replica in system.followed if isinstance(replica, FollowedRanking)]
    return ranking


@pytest.mark.parametrize(
    "where",
    [None, VectorFilter(projects=("default", "global", "ops")), VectorFilter(projects=("ops",))],
    ids=["everything", "every-project", "one-project"],
)
def test_recall_from_the_counts_in_memory_ranks_as_recall_from_the_store(
    pair: tuple[CognitiveSystem, CognitiveSystem], where: VectorFilter | None
) -> None:
    system, _ = pair
    assert_ranks_as_the_store(system, where)  # reads the counts, and keeps them
    words = words_of(system)
    assert words.at_hand("restores retries") is not None
    assert words.at_hand("stagng databse") is None  # a word to correct: read from the store
    assert_ranks_as_the_store(system, where)  # from memory this time


def test_a_write_by_another_process_is_in_the_next_recall_and_the_query_searched_again(
    pair: tuple[CognitiveSystem, CognitiveSystem],
) -> None:
    system, other = pair
    where = VectorFilter(projects=("default", "global", "ops"))
    assert_ranks_as_the_store(system, where)
    kept = ranking_of(system).filter_at_hand(where)
    assert kept == (None,)  # every memory in the two projects: the index is given no filter

    # Another process stores into a third project and a note holding the query's words: the
    # counts and the filter this process holds are now behind the store, unknown to it.
    stored = MemoryService(other).store_experience("Staging restores page the on-call.", project="web")
    other.flush()
    assert ranking_of(system).filter_at_hand(where) == (None,)
    assert words_of(system).at_hand("restores retries") is not None

    # Searched with what it holds, then checked: read again, and searched again.
    assert_ranks_as_the_store(system, where, ["restores retries"])
    assert ranking_of(system).filter_at_hand(where) == (where,)  # caught up: a filter now
    vector = system.encoder.encode(["staging restores"])[0]
    everything = system.retriever.retrieve(
        "staging restores", vector, max_results=5, include_bridges=False, now=NOW
    )
    assert stored.memory_id in {r.memory.id for r in (*everything.core, *everything.peripheral)}


def test_a_write_by_this_process_is_in_the_next_recall(pair: tuple[CognitiveSystem, CognitiveSystem]) -> None:
    system, _ = pair
    assert_ranks_as_the_store(system, None)
    MemoryService(system).store_experience("Mondays deploys are frozen in December.")
    system.flush()
    assert_ranks_as_the_store(system, None)
    MemoryService(system).forget_memories([m.id for m in system.records.memories.get(every_id(system))[:2]])
    assert_ranks_as_the_store(system, None)


def every_id(system: CognitiveSystem) -> list[str]:
    return sorted(m.id for batch in system.records.memories.batches() for m in batch)
