"""Several processes on one data directory share the embedded store through its owner."""

from __future__ import annotations

import contextlib
import socket
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from cognitive_memory.encoding import HashEncoder
from cognitive_memory.errors import RejectedPointsError, StorageError, StoreLockedError
from cognitive_memory.index import ArrayVectorStore, VectorFilter, VectorPoint
from cognitive_memory.index.shared_store import SharedVectorStore
from cognitive_memory.index.sparse import query_vector
from cognitive_memory.index.store_messages import receive, send
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
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

    vector = client.encoder.encode(["websocket"])[0]
    hits = client.vectors.search(vector, 5, VectorFilter(hierarchy_levels=(2,)))
    assert [hit.id for hit in hits] == [episode.id]
    assert client.vectors.search(vector, 5, VectorFilter(hierarchy_levels=(2,)), precise=True) == hits
    level_2 = VectorFilter(hierarchy_levels=(2,))
    assert client.vectors.search_many([vector, vector], 5, level_2) == [hits, hits]
    assert client.vectors.search(vector, 5, VectorFilter(ids=(episode.id,))) == hits  # a session's ids
    assert client.vectors.search(vector, 5, VectorFilter(ids=())) == []
    assert client.delete([episode.id]) == [episode.id]
    client.flush()
    assert owner.vectors.count() == 1
    assert sorted(client.vectors.ids()) == sorted(owner.vectors.ids())


def test_words_travel_over_the_socket_with_their_points(
    pair: tuple[CognitiveSystem, CognitiveSystem],
) -> None:
    owner, client = pair
    vector = client.encoder.encode(["postman"])[0]
    words = query_vector([("postman", 1.0)])
    point = VectorPoint(str(uuid.uuid4()), vector, {"project": "default"}, words)

    client.vectors.upsert([point])

    nearest, matches = client.vectors.search_with_words(vector, words, 3, VectorFilter(projects=("default",)))
    assert [hit.id for hit in matches] == [point.id]
    assert nearest[0].id == point.id
    assert owner.vectors.search_with_words(vector, words, 3) == (nearest, matches)


def test_a_words_update_travels_over_the_socket(pair: tuple[CognitiveSystem, CognitiveSystem]) -> None:
    owner, client = pair
    vector = client.encoder.encode(["postman"])[0]
    point = VectorPoint(str(uuid.uuid4()), vector, {"project": "default"}, query_vector([("postman", 1.0)]))
    client.vectors.upsert([point])
    unknown = str(uuid.uuid4())
    parcel = query_vector([("parcel", 1.0)])

    assert client.vectors.update_words({point.id: parcel, unknown: parcel}) == [unknown]

    assert [hit.id for hit in owner.vectors.search_with_words(vector, parcel, 3)[1]] == [point.id]
    assert owner.vectors.search_with_words(vector, query_vector([("postman", 1.0)]), 3)[1] == []


def test_a_dying_owner_that_still_accepts_connections_is_outlasted(tmp_path: Path) -> None:
    """A killed owner keeps its socket and lock for a moment; the client retries until it can take
    over instead of giving up after one retry (which queued a write in a CI run)."""
    socket_path = tmp_path / "vectors.sock"
    dying = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dying.bind(str(socket_path))
    dying.listen(16)
    released = threading.Event()

    def accept_and_drop() -> None:
        with contextlib.suppress(OSError):  # the listener is closed at the end of the test
            while not released.is_set():
                connection, _ = dying.accept()
                connection.close()

    threading.Thread(target=accept_and_drop, daemon=True).start()
    opens: list[int] = []

    def open_local() -> ArrayVectorStore:
        opens.append(1)
        if len(opens) < 6:  # the lock is held until the dying owner is fully gone
            raise StoreLockedError("locked")
        released.set()
        return ArrayVectorStore(4)

    store = SharedVectorStore(open_local, socket_path)
    try:
        assert not store.is_owner
        store.upsert([VectorPoint(str(uuid.UUID(int=1)), np.ones(4, dtype=np.float32), {})])
        assert store.is_owner
        assert store.count() == 1
    finally:
        store.close()
        dying.close()


def test_taking_over_replays_writes_the_dead_owner_never_indexed(
    pair: tuple[CognitiveSystem, CognitiveSystem], monkeypatch: pytest.MonkeyPatch
) -> None:
    owner, client = pair
    indexed = owner.store("The owner indexed this note about connection pools").memory

    def die_before_indexing(points: object) -> None:
        raise StorageError("the owner died between its SQLite commit and its index write")

    monkeypatch.setattr(shared(owner), "upsert", die_before_indexing)
    lost = owner.store("The owner committed this note about retries but never indexed it")
    assert lost.queued
    owner.close()

    client.vectors.count()  # the first call after the death takes over, then replays the outbox
    assert shared(client).is_owner
    assert client.status().pending_vector_writes == 0
    assert sorted(client.vectors.ids()) == sorted([indexed.id, lost.memory.id])


def test_a_point_the_owner_cannot_index_is_refused_and_the_owner_serves_on(
    pair: tuple[CognitiveSystem, CognitiveSystem],
) -> None:
    """Issue #27: each write of a point whose id is not a UUID killed the owner thread that served
    it; the client then tried to take over, reconnected and killed the next one."""
    owner, client = pair
    kept = owner.store("The owner stored this note about the release train").memory
    vector = client.encoder.encode(["a note imported with a hand-written id"])[0]

    for _ in range(3):
        with pytest.raises(RejectedPointsError) as refused:
            client.vectors.upsert([VectorPoint("my-note-1", vector, {})])
        assert list(refused.value.rejected) == ["my-note-1"]
        assert "is not a UUID" in refused.value.rejected["my-note-1"]

    assert not shared(client).is_owner  # the same connection answered every time: no take-over
    assert client.vectors.ids() == [kept.id]
    client.vectors.delete(["my-note-1"])
    assert client.vectors.count() == 1


def test_a_request_the_owner_did_not_foresee_is_answered_as_an_error_on_a_living_connection(
    pair: tuple[CognitiveSystem, CognitiveSystem], caplog: pytest.LogCaptureFixture
) -> None:
    owner, _ = pair
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as raw:
        raw.settimeout(10)
        raw.connect(str(Settings(env_file=None).storage.socket_path))
        for malformed in ({"op": "upsert", "points": [{"id": "my-note-1"}]}, {"op": "search"}, {"no": "op"}):
            send(raw, malformed)
            answer = receive(raw)
            assert (answer["ok"], answer["code"]) == (False, "owner_error")
            assert "failed this request" in answer["message"]
        send(raw, {"op": "count"})
        assert receive(raw) == {"ok": True, "result": 0}
    assert "The vector store's owner failed a 'upsert' request" in caplog.text
    assert shared(owner).is_owner
