"""Each memory's point carries its words and its neighbours' (cognitive_memory/replicas/index_points.py):
written with the memory, again when a neighbour in time changes, and rebuilt from SQLite."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from cognitive_memory.core.records import MemoryEdit
from cognitive_memory.core.terms import terms
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.errors import StorageError
from cognitive_memory.index import EdgeVectorStore, VectorPoint, VectorStore
from cognitive_memory.index.qdrant_store import QdrantServerVectorStore
from cognitive_memory.index.sparse import query_vector
from cognitive_memory.replicas import index_build as background_index
from cognitive_memory.replicas import index_replication as replication
from cognitive_memory.replicas import index_words as words_upgrade
from cognitive_memory.replicas.index_words import WordsUpgrade
from cognitive_memory.retrieval import RetrievalConfig, Retriever
from cognitive_memory.storage import SQLiteMemoryStore
from cognitive_memory.storage.word_documents import WEIGHTING_AVERAGE
from cognitive_memory.system import CognitiveSystem
from cognitive_memory.upkeep.vectors import check_words

Opener = Callable[[], CognitiveSystem]


@pytest.fixture(params=["edge", "qdrant-client"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens a system over the same database and index, as each new process does."""
    opened: list[CognitiveSystem] = []

    def vectors() -> VectorStore:
        if request.param == "edge":
            return EdgeVectorStore(tmp_path / "edge")
        return QdrantServerVectorStore(QdrantClient(path=str(tmp_path / "qc")), "memories", "local")

    def open_system() -> CognitiveSystem:
        if opened:
            opened.pop().close()
        memories, index = SQLiteMemoryStore(tmp_path / "memories.db"), vectors()
        system = CognitiveSystem(
            memories, index, HashEncoder(), Retriever(memories, index, RetrievalConfig())
        )
        opened.append(system)
        return system

    yield open_system
    if opened:
        opened.pop().close()


def _matches(system: CognitiveSystem, text: str) -> dict[str, float]:
    query = query_vector((term, 1.0) for term in terms(text))
    _, hits = system.vectors.search_with_words(system.encoder.encode([text])[0], query, 10)
    return {hit.id: hit.score for hit in hits}


def test_a_stored_memorys_words_are_found_in_it_and_weakly_in_its_neighbour(opener: Opener) -> None:
    system = opener()
    first = system.store("We hiked the ridge trail at dawn", session_id="s").memory
    second = system.store("The glacier lake was turquoise", session_id="s").memory
    system.store("Dinner was lentil soup", session_id="other")

    found = _matches(system, "glacier")

    assert set(found) == {first.id, second.id}
    assert found[second.id] > found[first.id]  # its own word against a neighbour's at 0.3
    assert set(_matches(system, "ridge")) == {first.id, second.id}


def test_an_edited_memorys_old_words_leave_its_neighbour(opener: Opener) -> None:
    system = opener()
    first = system.store("We hiked the ridge trail at dawn", session_id="s").memory
    second = system.store("The glacier lake was turquoise", session_id="s").memory

    system.edits.update(second.id, MemoryEdit(text="The mountain hut served strudel"))

    assert _matches(system, "glacier") == {}
    assert set(_matches(system, "strudel")) == {first.id, second.id}


def test_a_deleted_memorys_words_leave_its_neighbour(opener: Opener) -> None:
    system = opener()
    first = system.store("We hiked the ridge trail at dawn", session_id="s").memory
    second = system.store("The glacier lake was turquoise", session_id="s").memory

    system.delete([second.id])
    system.flush()

    assert _matches(system, "glacier") == {}
    assert set(_matches(system, "ridge")) == {first.id}


def test_a_neighbours_new_words_wait_in_the_outbox_while_the_index_fails(
    opener: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    system = opener()
    first = system.store("We hiked the ridge trail at dawn", session_id="s").memory

    def refuse(points: object) -> None:
        raise StorageError("the index is away")

    monkeypatch.setattr(system.vectors, "upsert", refuse)
    second = system.store("The glacier lake was turquoise", session_id="s").memory
    system.flush()
    assert sorted(memory_id for memory_id, _ in system.records.outbox.pending()) == sorted(
        [first.id, second.id]
    )
    monkeypatch.undo()

    reopened = opener()
    reopened.flush()  # the replay's confirmations are cleared from the outbox by the bookkeeping

    assert reopened.records.outbox.pending() == []
    assert set(_matches(reopened, "glacier")) == {first.id, second.id}


def test_a_stored_memory_rewrites_only_the_words_of_its_neighbours(
    opener: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    system = opener()
    first = system.store("We hiked the ridge trail at dawn", session_id="s").memory
    upserted = _recording_upserts(system, monkeypatch)
    # The average length drifts at the second memory: every point would be written again.
    monkeypatch.setattr(system.records.word_documents, "drifted", lambda: False)

    second = system.store("The glacier lake was turquoise", session_id="s").memory
    system.flush()

    assert upserted == [second.id]
    assert set(_matches(system, "glacier")) == {first.id, second.id}
    assert system.records.outbox.pending() == []


def test_a_neighbours_words_replay_when_their_update_fails(
    opener: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    system = opener()
    first = system.store("We hiked the ridge trail at dawn", session_id="s").memory

    def refuse(words: object) -> list[str]:
        raise StorageError("the index is away")

    monkeypatch.setattr(system.vectors, "update_words", refuse)
    monkeypatch.setattr(system.records.word_documents, "drifted", lambda: False)
    second = system.store("The glacier lake was turquoise", session_id="s").memory
    system.flush()
    assert [memory_id for memory_id, _ in system.records.outbox.pending()] == [first.id]
    assert set(_matches(system, "glacier")) == {second.id}
    monkeypatch.undo()

    reopened = opener()
    reopened.flush()  # the replay's confirmations are cleared from the outbox by the bookkeeping

    assert reopened.records.outbox.pending() == []
    assert set(_matches(reopened, "glacier")) == {first.id, second.id}


def test_a_rebuild_gives_every_point_its_words_and_takes_the_stores_average_length(opener: Opener) -> None:
    system = opener()
    stored = [system.store(f"note {n} about the kafka consumer lag", session_id="s").memory for n in range(3)]
    system.records.word_documents.reweigh()
    before = system.records.word_documents.weighting_average()
    system.store("a much longer note " + "about many different words " * 10, session_id="t")

    system.rebuild_index()

    after = system.records.word_documents.weighting_average()
    assert after == pytest.approx(system.records.word_documents.current_average())
    assert after > before
    assert {m.id for m in stored} <= set(_matches(system, "kafka"))


def test_words_are_weighted_again_once_the_average_length_drifts(opener: Opener) -> None:
    system = opener()
    documents = system.records.word_documents
    short = system.store("kafka lag", session_id="s").memory
    assert documents.weighting_average() == pytest.approx(2.0)
    matches = _matches(system, "kafka")

    system.store("a much longer note about " + "many different words " * 8, session_id="t")

    assert documents.weighting_average() == pytest.approx(documents.current_average())
    assert documents.weighting_average() > 2.0
    assert _matches(system, "kafka")[short.id] > matches[short.id]  # shorter than average now


def _recording_upserts(system: CognitiveSystem, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the points ``system`` upserts from now on, in order."""
    upserted: list[str] = []
    upsert = system.vectors.upsert

    def record(points: Sequence[VectorPoint]) -> None:
        upserted.extend(point.id for point in points)
        upsert(points)

    monkeypatch.setattr(system.vectors, "upsert", record)
    return upserted


def _drifted_large_store(
    system: CognitiveSystem, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[str], list[str]]:
    """Two short notes, then a long one that drifts the average length. Returns the long one's id
    with the points written by its store call, and the short notes' ids."""
    shorts = [
        system.store(text, session_id=session).memory
        for text, session in (("kafka lag", "s"), ("kafka consumer", "t"))
    ]
    before = _matches(system, "kafka")
    upserted = _recording_upserts(system, monkeypatch)
    long = system.store("a much longer note about " + "many different words " * 8, session_id="u").memory
    assert {m.id for m in shorts} <= set(before)
    return [long.id, *upserted], [m.id for m in shorts]


@pytest.fixture
def large(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stores of more than one memory weigh their words again in the background."""
    monkeypatch.setattr(replication, "REWEIGH_INLINE", 1)


@pytest.mark.usefixtures("large")
def test_a_large_store_takes_the_new_average_at_once_and_weighs_the_words_again_in_the_background(
    opener: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    system = opener()
    documents = system.records.word_documents
    (long_id, *written), shorts = _drifted_large_store(system, monkeypatch)

    # The store call wrote its own point only; the others still have their old words.
    assert written == [long_id]
    assert documents.weighting_average() == pytest.approx(documents.current_average())
    assert system.status().words_reweighing == (0, 3)
    assert check_words(system).detail.endswith(
        "weighed again against the store's average length in the background: 0 of 3"
    )
    during = _matches(system, "kafka")

    while system.words_upgrade.step():
        pass

    after = _matches(system, "kafka")
    assert system.status().words_reweighing is None
    assert all(after[i] > during[i] for i in shorts)  # shorter than the average now
    system.rebuild_index()  # weighs every memory against the same average
    assert _matches(system, "kafka") == pytest.approx(after)


@pytest.mark.usefixtures("large")
def test_a_copy_swapped_in_later_leaves_the_average_and_the_pass_to_the_served_index(
    opener: Opener, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The background index build copies SQLite's vectors into a shard the owner swaps in later,
    or never (a failed swap): the served shard's average and pass must stay SQLite's until then."""
    system = opener()
    _drifted_large_store(system, monkeypatch)
    with system.records.database.transaction() as conn:  # kept, within the drift of the current
        conn.execute("UPDATE store_meta SET value = '7.5' WHERE key = ?", (WEIGHTING_AVERAGE,))

    assert background_index.build(system.records.path, tmp_path / "copy") == 3

    assert system.records.word_documents.weighting_average() == 7.5
    assert system.status().words_reweighing == (0, 3)


@pytest.mark.usefixtures("large")
def test_a_pass_stopped_half_way_goes_on_in_the_next_process(
    opener: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    system = opener()
    _, (first, second) = _drifted_large_store(system, monkeypatch)
    assert WordsUpgrade(system.records, system.vectors, batch_size=1).step()

    reopened = opener()
    assert reopened.status().words_reweighing == (1, 3)
    during = _matches(reopened, "kafka")  # the first short note is weighed again, the second not
    while WordsUpgrade(reopened.records, reopened.vectors, batch_size=1).step():
        pass

    assert reopened.status().words_reweighing is None
    after = _matches(reopened, "kafka")
    assert (after[first], after[second]) == (pytest.approx(during[first]), pytest.approx(after[first]))
    assert after[second] > during[second]


@pytest.mark.usefixtures("large")
def test_a_drift_during_a_pass_starts_it_again_from_the_first_memory(
    opener: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    system = opener()
    _drifted_large_store(system, monkeypatch)
    upgrade = WordsUpgrade(system.records, system.vectors, batch_size=1)
    write = upgrade._write

    def drift_meanwhile(ids: Sequence[str]) -> bool:
        written = write(ids)
        system.records.word_documents.reweigh(in_background=True)  # another store drifted it
        return written

    upgrade._write = drift_meanwhile  # type: ignore[method-assign]
    assert upgrade.step()

    assert system.status().words_reweighing == (0, 3)  # the batch did not move the new pass on


@pytest.mark.usefixtures("large")
def test_the_thread_of_the_index_owner_takes_up_a_pass_started_after_it_went_idle(
    opener: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(words_upgrade, "IDLE_SECONDS", 0.05)
    system = opener()
    system.words_upgrade.start(lambda: True, delay=0)
    assert system.words_upgrade.wait(timeout=30)

    _drifted_large_store(system, monkeypatch)
    deadline = time.monotonic() + 30
    while system.status().words_reweighing is not None and time.monotonic() < deadline:
        time.sleep(0.05)

    assert system.status().words_reweighing is None


@pytest.mark.usefixtures("large")
def test_a_damaged_watermark_starts_the_pass_again_from_the_first_memory(
    opener: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    system = opener()
    _drifted_large_store(system, monkeypatch)
    with system.records.database.transaction() as conn:
        conn.execute("UPDATE store_meta SET value = 'not a rowid' WHERE key = 'words_reweighed_through'")

    assert system.status().words_reweighing == (0, 3)
    assert check_words(system).status == "ok"
    while system.words_upgrade.step():
        pass
    assert system.status().words_reweighing is None
