"""Several processes on one data directory share the embedded store through its owner."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cognitive_memory.encoding import HashEncoder
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from cognitive_memory.storage.shared_store import SharedVectorStore
from cognitive_memory.system import CognitiveSystem


@pytest.fixture
def pair(data_dir: Path) -> Iterator[tuple[CognitiveSystem, CognitiveSystem]]:
    """Two systems on the same data directory, as two server processes would have them.

    (The Edge WAL lock holds within one process too, so one test process can play both.)
    """
    first = build_system(Settings(env_file=None), encoder=HashEncoder())
    second = build_system(Settings(env_file=None), encoder=HashEncoder())
    yield first, second
    second.close()
    first.close()


def shared(system: CognitiveSystem) -> SharedVectorStore:
    assert isinstance(system.vectors, SharedVectorStore)
    return system.vectors


def test_the_first_opener_owns_the_store_and_the_second_reaches_it(
    pair: tuple[CognitiveSystem, CognitiveSystem],
) -> None:
    owner, client = pair
    assert shared(owner).is_owner and not shared(client).is_owner
    from_client = client.store("The client process stored this about kubernetes probes").memory
    from_owner = owner.store("The owner process stored this about terraform state").memory
    assert client.retrieve("terraform state").core[0].memory.id == from_owner.id
    assert owner.retrieve("kubernetes probes").core[0].memory.id == from_client.id
    assert client.vectors.count() == owner.vectors.count() == 2
    assert client.vectors.info().details["served_by_pid"] > 0


def test_a_client_takes_over_when_the_owner_goes_away(pair: tuple[CognitiveSystem, CognitiveSystem]) -> None:
    owner, client = pair
    before = owner.store("Stored while the first process owned the store").memory
    owner.close()

    after = client.store("Stored after the owner went away").memory

    assert shared(client).is_owner
    assert client.vectors.count() == 2
    assert client.retrieve("stored while the first process owned").core[0].memory.id == before.id
    assert client.retrieve("after the owner went away").core[0].memory.id == after.id
    third = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        assert not shared(third).is_owner
        assert third.vectors.count() == 2
    finally:
        third.close()


def test_a_filtered_search_and_deletion_travel_over_the_socket(
    pair: tuple[CognitiveSystem, CognitiveSystem],
) -> None:
    owner, client = pair
    episode = client.store("I fixed the flaky websocket test yesterday").memory
    client.store("Always pin the websocket library version")
    from cognitive_memory.storage import VectorFilter

    vector = client.encoder.encode(["websocket"])[0]
    hits = client.vectors.search(vector, 5, VectorFilter(hierarchy_levels=(2,)))
    assert [hit.id for hit in hits] == [episode.id]
    assert client.delete([episode.id]) == [episode.id]
    client.flush()
    assert owner.vectors.count() == 1
    assert sorted(client.vectors.ids()) == sorted(owner.vectors.ids())
