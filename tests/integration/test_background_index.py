"""Memories stored one by one get the HNSW index built in another process and swapped in.

Through the system as ``build_system`` makes it (SQLite, the shared Qdrant Edge shard, the hash
encoder), with the build threshold lowered from 5,000 unindexed vectors to 700 (Edge itself
indexes only segments above 1,000 KB, about 650 vectors of 384 dimensions).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import cognitive_memory.index.edge_layout as edge_layout
import cognitive_memory.main as main_module
import cognitive_memory.replicas.index_build as background_module
import cognitive_memory.replicas.index_points as index_points
from cognitive_memory.core.memory import CognitiveMemory
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.errors import StorageError
from cognitive_memory.index import EdgeVectorStore, VectorFilter, VectorPoint, edge_store, payload_for
from cognitive_memory.index.shared_store import SharedVectorStore
from cognitive_memory.index.sparse import SparseVector
from cognitive_memory.main import build_system
from cognitive_memory.replicas.index_build import BackgroundIndexer, build
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem
from cognitive_memory.upkeep import check_vectors

THRESHOLD = 700


@pytest.fixture
def system(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, store_of_record: str
) -> Iterator[CognitiveSystem]:
    monkeypatch.setattr(main_module, "background_threshold", lambda points: THRESHOLD)
    settings = Settings(env_file=None)
    built = build_system(settings, "default", encoder=HashEncoder(384))
    yield built
    built.close()


def _indexer(system: CognitiveSystem) -> BackgroundIndexer:
    vectors = system.vectors
    assert isinstance(vectors, SharedVectorStore)
    local = vectors._local  # noqa: SLF001 - this process owns the shard in these tests
    assert isinstance(local, EdgeVectorStore)
    assert isinstance(local.watcher, BackgroundIndexer)
    return local.watcher


def _store(system: CognitiveSystem, start: int, count: int) -> list[str]:
    return [
        system.store(f"note {n}: the {n % 37}th service and the {n * 7 % 101}th queue").memory.id
        for n in range(start, start + count)
    ]


def _wait_for_build(indexer: BackgroundIndexer, builds: int = 1) -> None:
    deadline = time.monotonic() + 120
    while indexer.builds < builds or indexer.running:
        assert time.monotonic() < deadline, "the background index build did not finish"
        time.sleep(0.05)


@pytest.mark.subprocess
def test_one_by_one_stores_get_the_index_built_in_another_process(system: CognitiveSystem) -> None:
    indexer = _indexer(system)
    before = _store(system, 0, 760)  # the look after the 750th write starts the build
    assert indexer.running, "760 unindexed vectors and no build started"
    assert system.vectors.info().details["index_build_pid"] == indexer.building
    doctor = check_vectors(system)
    assert (doctor.status, doctor.detail.endswith(f"being built in process {indexer.building}")) == (
        "ok",
        True,
    )
    during = _store(system, 760, 40)  # journaled, applied to the new shard when it is swapped in
    _wait_for_build(indexer)
    info = system.vectors.info()
    assert info.details["indexed_vectors"] >= 700
    assert info.vector_count == 800 == system.records.memories.counts().total
    for memory_id in [*before[:5], *during]:
        memory = system.records.memories.get([memory_id])[0]
        assert memory.cognitive_embedding is not None
        hit = system.vectors.search(memory.cognitive_embedding, 1)[0]
        assert hit.id == memory_id and hit.score > 0.999
    assert not indexer.built_path.exists()
    assert not (indexer.built_path.parent / "vectors.previous").exists()


@pytest.mark.subprocess
@pytest.mark.stores  # on PostgreSQL the child reads the database's URL from its stdin
def test_bulk_writes_leave_the_index_to_their_own_build(
    system: CognitiveSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    indexer = _indexer(system)
    system.store_many([f"bulk note {n} on the {n % 13}th topic" for n in range(900)])
    assert not indexer.running
    assert not indexer.check(), "a look while a bulk load runs (its last write just now) waits"
    monkeypatch.setattr(background_module, "BULK_QUIET_SECONDS", 0.0)
    assert indexer.check(), "once the bulk writes stop, a look at 900 unindexed vectors starts a build"
    _wait_for_build(indexer)
    assert system.vectors.info().details["indexed_vectors"] == 900


@pytest.mark.subprocess
def test_closing_during_a_build_stops_it_and_loses_nothing(
    system: CognitiveSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    indexer = _indexer(system)
    _store(system, 0, 760)
    assert indexer.running
    system.close()
    assert not indexer.built_path.exists()
    monkeypatch.setattr(background_module, "FIRST_LOOK_SECONDS", 0.0)
    reopened = build_system(Settings(env_file=None), "default", encoder=HashEncoder(384))
    try:
        assert reopened.vectors.count() == 760
        # The reopened owner looks soon after opening (here at once), finds 760 unindexed, builds.
        _wait_for_build(_indexer(reopened))
        assert reopened.vectors.info().details["indexed_vectors"] >= 700
    finally:
        reopened.close()


@pytest.mark.subprocess
def test_a_failed_build_keeps_the_served_shard(
    system: CognitiveSystem, monkeypatch: pytest.MonkeyPatch, data_dir: Path
) -> None:
    indexer = _indexer(system)
    monkeypatch.setattr(
        indexer, "_db", str(data_dir / "missing-dir" / "nothing.db")
    )  # the child cannot open it
    _store(system, 0, 760)
    deadline = time.monotonic() + 60
    while indexer.running:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert indexer.builds == 0
    assert system.vectors.count() == 760
    assert system.vectors.info().details["indexed_vectors"] == 0
    assert not indexer.built_path.exists()


@pytest.mark.subprocess
def test_a_shard_of_the_older_layout_is_rebuilt_memory_mapped_once(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shards made before the memory-mapped layout hold their HNSW graph and word index on the
    heap, read whole at each load (2-3 s at 1,000,000 vectors): their owner rebuilds them in the
    background, fully indexed, once, though no vector is unindexed."""
    monkeypatch.setattr(main_module, "background_threshold", lambda points: THRESHOLD)
    layout = edge_layout._MEMORY  # noqa: SLF001 - the layout before it is what this test makes
    monkeypatch.setattr(edge_layout, "_MEMORY", None)
    older = build_system(Settings(env_file=None), "default", encoder=HashEncoder(384))
    notes = [f"older note {n} on the {n % 13}th topic" for n in range(800)]
    ids = [outcome.memory.id for outcome in older.store_many(notes)]
    local = older.vectors._local  # noqa: SLF001 - this process owns the shard in these tests
    assert isinstance(local, EdgeVectorStore)
    assert local.build_index(0)
    older.close()
    monkeypatch.setattr(edge_layout, "_MEMORY", layout)
    system = build_system(Settings(env_file=None), "default", encoder=HashEncoder(384))
    try:
        indexer = _indexer(system)
        local = system.vectors._local  # noqa: SLF001 - this process owns the shard in these tests
        assert isinstance(local, EdgeVectorStore)
        assert local.unindexed() == (800, 0)
        assert local.heap_loaded() > 0

        assert indexer.check(), "an indexed shard of the older layout gets a build"
        _wait_for_build(indexer)

        assert local.heap_loaded() == 0
        assert local.unindexed() == (800, 0)
        for memory_id in ids[::100]:
            memory = system.records.memories.get([memory_id])[0]
            assert memory.cognitive_embedding is not None
            assert system.vectors.search(memory.cognitive_embedding, 1)[0].id == memory_id
        monkeypatch.setattr(local, "heap_loaded", lambda: 1)  # a build that left the old layout
        assert not indexer.check(), "the layout's build is tried once per process"
    finally:
        system.close()


def _without_session(memory: CognitiveMemory) -> dict[str, Any]:
    """A memory's payload as releases before the session was in it wrote it."""
    return {name: value for name, value in payload_for(memory).items() if name != "session_id"}


@pytest.mark.subprocess
def test_a_shard_made_before_sessions_were_in_the_payload_is_rebuilt_with_them_once(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its points lack their session, so a session filter goes by the ids of the session's latest
    memories (capped); its owner rebuilds it from SQLite in the background, with every point's
    session and the payload index that marks it."""
    older_fields = {name: kind for name, kind in edge_store.INDEXED_FIELDS.items() if name != "session_id"}
    with monkeypatch.context() as before:
        before.setattr(edge_store, "INDEXED_FIELDS", older_fields)
        before.setattr(
            index_points,
            "payload_for",
            lambda m: {k: v for k, v in payload_for(m).items() if k != "session_id"},
        )
        older = build_system(Settings(env_file=None), "default", encoder=HashEncoder(384))
        notes = [f"ferry note {n}" for n in range(30)]
        mine = [outcome.memory.id for outcome in older.store_many(notes, session_id="mine")]
        older.store_many([f"{note} elsewhere" for note in notes], session_id="other")
        older.close()
    system = build_system(Settings(env_file=None), "default", encoder=HashEncoder(384))
    try:
        indexer = _indexer(system)
        assert not system.vectors.has_sessions()

        assert indexer.check(), "a shard without the sessions gets a build"
        _wait_for_build(indexer)

        assert system.vectors.has_sessions()
        query = system.encoder.encode(["ferry note 7"])[0]
        hits = system.vectors.search(query, 60, VectorFilter(sessions=("mine",)))
        assert sorted(hit.id for hit in hits) == sorted(mine)
        assert not indexer.check(), "looked at once per process"
    finally:
        system.close()


@pytest.mark.subprocess
def test_a_lost_shard_is_copied_again_from_sqlite(data_dir: Path) -> None:
    """Its files deleted (or an older copy put back), the shard opens empty or short: recall found
    nothing that SQLite holds, and no write ever brought the rest back. Its owner's first look
    rebuilds it from SQLite."""
    older = build_system(Settings(env_file=None), "default", encoder=HashEncoder(384))
    ids = [outcome.memory.id for outcome in older.store_many([f"kept note {n}" for n in range(40)])]
    older.close()
    shutil.rmtree(data_dir / "vectors")
    system = build_system(Settings(env_file=None), "default", encoder=HashEncoder(384))
    try:
        indexer = _indexer(system)
        assert system.vectors.count() == 0
        assert (system.status().problem or "").startswith("The vector index holds 0 vectors for 40 memories")

        assert indexer.check(), "a shard short of SQLite's memories gets a build"
        _wait_for_build(indexer)

        assert sorted(system.vectors.ids()) == sorted(ids)
        assert system.status().problem is None
        found = system.retrieve("kept note 7", include_bridges=False)
        assert found.core and found.core[0].memory.content == "kept note 7"
        assert not indexer.check(), "looked at once per process"
    finally:
        system.close()


def test_a_shard_moved_aside_by_an_interrupted_swap_is_found_again(tmp_path: Path) -> None:
    store = EdgeVectorStore(tmp_path / "vectors", 384)
    store.close()
    (tmp_path / "vectors").rename(tmp_path / "vectors.previous")  # died between adopt's renames
    reopened = EdgeVectorStore(tmp_path / "vectors", 384)
    try:
        assert reopened.count() == 0
        assert not (tmp_path / "vectors.previous").exists()
    finally:
        reopened.close()


def test_the_child_builds_an_indexed_copy_of_sqlites_vectors(system: CognitiveSystem, tmp_path: Path) -> None:
    system.store_many([f"copied note {n}" for n in range(800)])
    target = tmp_path / "copy"
    assert build(system.records.path, target) == 800
    copy = EdgeVectorStore(target, 384)
    try:
        assert copy.count() == 800
        assert copy.unindexed() == (800, 0)
    finally:
        copy.close()


@pytest.mark.parametrize("defect", ["another dimension", "too few points"])
def test_a_built_shard_that_is_wrong_leaves_the_served_one_serving(tmp_path: Path, defect: str) -> None:
    store = EdgeVectorStore(tmp_path / "vectors", 384)
    try:
        store.upsert([VectorPoint(_uuid(n), _unit(n), {}) for n in range(3)])
        built = tmp_path / "vectors.building"
        wrong = EdgeVectorStore(built, 16 if defect == "another dimension" else 384)
        wrong.close()
        store.journal()
        store.upsert([VectorPoint(_uuid(3), _unit(3), {})])
        with pytest.raises(StorageError, match="Could not swap in"):
            store.adopt(built)
        assert store.count() == 4
        store.upsert([VectorPoint(_uuid(4), _unit(4), {})])
        assert store.search(_unit(4), 1)[0].id == _uuid(4)
        assert built.is_dir() and not store.previous_path.exists()
    finally:
        store.close()


def _uuid(n: int) -> str:
    return f"00000000-0000-0000-0000-{n:012d}"


def _unit(axis: int) -> np.ndarray:
    vector = np.zeros(384, dtype=np.float32)
    vector[axis] = 1.0
    return vector


def test_points_written_again_are_unindexed_until_the_optimizers_index_them(tmp_path: Path) -> None:
    """Writing a point again (its words, as an older store's upgrade does, or itself, as
    ``doctor --repair`` does) moves it out of the HNSW index; Edge still counts its old copy as
    indexed, and the rebuild after a repair skipped indexing, leaving every point searched exactly."""
    path = tmp_path / "vectors"
    ids = [_uuid(n) for n in range(800)]
    rng = np.random.default_rng(7)
    store = EdgeVectorStore(path, 384)
    try:
        store.upsert([VectorPoint(i, _normalised(rng.normal(size=384)), {}) for i in ids])
        assert store.build_index(0) and store.unindexed() == (800, 0)
        store.update_words({i: SparseVector((n % 50,), (1.0,)) for n, i in enumerate(ids)})
        assert store.unindexed() == (800, 800)
        assert store.info().details["indexed_vectors"] == 0
    finally:
        store.close()
    reopened = EdgeVectorStore(path, 384)  # the next process that opens the shard knows it too
    try:
        assert reopened.unindexed() == (800, 800)
        assert reopened.build_index(700)
        assert reopened.unindexed() == (800, 0)
        assert reopened.info().details["indexed_vectors"] == 800
    finally:
        reopened.close()


@pytest.mark.subprocess
def test_a_bulk_write_that_builds_no_index_gets_it_built_once_it_stops(
    system: CognitiveSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(background_module, "BULK_QUIET_SECONDS", 0.5)
    indexer = _indexer(system)
    ids = [outcome.memory.id for outcome in system.store_many([f"bulk note {n}" for n in range(800)])]
    local = system.vectors._local  # noqa: SLF001 - this process owns the shard in these tests
    assert isinstance(local, EdgeVectorStore)
    assert local.build_index(0) and local.unindexed() == (800, 0)
    for start in range(0, 800, 256):  # the words of an older store, built in batches
        local.update_words({i: SparseVector((1,), (1.0,)) for i in ids[start : start + 256]})

    _wait_for_build(indexer)

    assert system.vectors.info().details["indexed_vectors"] == 800


def _normalised(vector: np.ndarray) -> np.ndarray:
    return np.asarray(vector / np.linalg.norm(vector), dtype=np.float32)
