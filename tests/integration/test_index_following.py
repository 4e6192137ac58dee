"""Each process's own index kept in step with a store of record other processes write, by the
change log (``replicas.IndexFollower``): what a team's servers on one database need, played here
by two systems with their own data directories (so their own embedded indexes) on one SQLite file."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from cognitive_memory.core.records import MemoryEdit
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.main import build_system, shares_its_store
from cognitive_memory.replicas.index_following import MARKER_NAME
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem


def server(
    root: Path, name: str, monkeypatch: pytest.MonkeyPatch, *, follow: bool | None = None
) -> CognitiveSystem:
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(root / name))
    monkeypatch.setenv("COGNITIVE_MEMORY_DB_PATH", str(root / "shared.db"))
    return build_system(Settings(env_file=None), encoder=HashEncoder(), follow_index=follow)


def test_an_index_follows_its_store_when_other_data_directories_may_write_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(tmp_path / "a"))
    assert not shares_its_store(Settings(env_file=None))
    monkeypatch.setenv("COGNITIVE_MEMORY_DB_PATH", str(tmp_path / "a" / "cognitive_memory.db"))
    assert not shares_its_store(Settings(env_file=None))
    monkeypatch.setenv("COGNITIVE_MEMORY_DB_PATH", str(tmp_path / "shared.db"))
    assert shares_its_store(Settings(env_file=None))
    monkeypatch.setenv("QDRANT_URL", "http://localhost:6333")
    assert not shares_its_store(Settings(env_file=None))


@pytest.fixture
def pair(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[CognitiveSystem, CognitiveSystem]]:
    first = server(tmp_path, "a", monkeypatch)
    second = server(tmp_path, "b", monkeypatch)
    yield first, second
    second.close()
    first.close()


def found(system: CognitiveSystem, query: str) -> list[str]:
    return [ranked.memory.content for ranked in system.retrieve(query, include_bridges=False).core]


def test_a_memory_stored_by_one_server_is_recalled_by_the_next_recall_of_the_other(
    pair: tuple[CognitiveSystem, CognitiveSystem],
) -> None:
    first, second = pair
    found(second, "anything")  # the second's index is written whole once: empty now

    first.store("The staging cluster moved to the Frankfurt region in March.")

    assert second.vectors.count() == 0
    assert found(second, "staging cluster Frankfurt region") == [
        "The staging cluster moved to the Frankfurt region in March."
    ]
    assert second.vectors.count() == 1


def test_an_update_and_a_forgetting_reach_the_other_servers_index(
    pair: tuple[CognitiveSystem, CognitiveSystem],
) -> None:
    first, second = pair
    kept = first.store("The deploy window is Tuesday at noon.").memory
    gone = first.store("The office plants are watered on Fridays.").memory
    found(second, "deploy window")
    assert second.vectors.count() == 2

    first.edits.update(kept.id, MemoryEdit(text="The deploy window is Thursday at noon."))
    first.delete([gone.id])

    assert found(second, "deploy window Thursday") == ["The deploy window is Thursday at noon."]
    assert second.vectors.ids() == [kept.id]


def test_a_server_started_on_a_store_others_filled_writes_its_index_once_then_follows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = server(tmp_path, "a", monkeypatch)
    for n in range(5):
        first.store(f"Fact number {n} about the billing service.")
    second = server(tmp_path, "b", monkeypatch)
    try:
        assert len(found(second, "billing service fact")) >= 1
        assert second.vectors.count() == 5
        marker = json.loads((tmp_path / "b" / "vectors" / MARKER_NAME).read_text())
        assert marker["seq"] == second.records.changes.head()
        assert marker["store"] == second.records.properties.get("store_id")
    finally:
        second.close()
        first.close()


def test_an_index_made_for_another_store_is_written_again_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = server(tmp_path, "a", monkeypatch)
    first.store("The release train leaves every second Wednesday.")
    found(first, "release train")
    marker = tmp_path / "a" / "vectors" / MARKER_NAME
    marker.write_text(json.dumps({"store": "another-store", "seq": 10**9}))
    first.close()

    again = server(tmp_path, "a", monkeypatch)
    try:
        assert found(again, "release train Wednesday") == ["The release train leaves every second Wednesday."]
        assert json.loads(marker.read_text())["store"] == again.records.properties.get("store_id")
    finally:
        again.close()


def test_without_a_follower_the_other_servers_index_misses_the_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the follower is for: the same two servers, the second not following."""
    first = server(tmp_path, "a", monkeypatch)
    second = server(tmp_path, "b", monkeypatch, follow=False)
    try:
        first.store("The staging cluster moved to the Frankfurt region in March.")
        found(second, "staging cluster")
        assert second.vectors.count() == 0
    finally:
        second.close()
        first.close()


def test_a_near_duplicate_stored_by_the_other_server_is_named_at_store(
    pair: tuple[CognitiveSystem, CognitiveSystem],
) -> None:
    first, second = pair
    found(second, "anything")
    original = first.store("The on-call rotation changes every Monday morning.").memory

    outcome = second.store("The on-call rotation changes every Monday morning!")

    assert outcome.nearest is not None and outcome.nearest.id == original.id


def test_a_fifo_planted_as_the_record_of_changes_is_not_waited_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "a" / "vectors" / MARKER_NAME
    marker.parent.mkdir(parents=True)
    os.mkfifo(marker)
    first = server(tmp_path, "a", monkeypatch)
    try:
        first.store("The release train leaves every second Wednesday.")
        assert found(first, "release train Wednesday") == ["The release train leaves every second Wednesday."]
        assert json.loads(marker.read_text())["seq"] == first.records.changes.head()  # replaced whole
    finally:
        first.close()


def test_a_recall_while_another_server_writes_is_not_called_short(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = server(tmp_path, "a", monkeypatch)
    first.store("The release train leaves every second Wednesday.")
    second = server(tmp_path, "b", monkeypatch)
    try:
        # A followed index is not counted against the store (which races other servers' writes):
        # it is whole up to the change log's head before each recall.
        assert second.retriever.coverage is None
        result = second.retrieve("release train Wednesday")
        assert not result.degraded and result.shortfall is None
        assert [r.memory.content for r in result.core] == ["The release train leaves every second Wednesday."]
    finally:
        second.close()
        first.close()


def test_a_recall_s_uses_are_not_written_into_the_other_servers_index(
    pair: tuple[CognitiveSystem, CognitiveSystem],
) -> None:
    first, second = pair
    first.store("The staging cluster moved to the Frankfurt region in March.")
    found(second, "anything")  # caught up
    assert second.index_follower is not None
    assert second.index_follower.catch_up() == 0

    assert found(first, "staging cluster Frankfurt region")  # uses: access count and last use
    first.flush()

    assert second.index_follower.catch_up() == 0  # they change no point of the index
