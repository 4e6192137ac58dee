"""One behaviour suite for every VectorStore: Qdrant Edge, qdrant-client (local mode), in-memory."""

from __future__ import annotations

import fcntl
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from qdrant_client import QdrantClient

from cognitive_memory.core.memory import CognitiveMemory, HierarchyLevel, MemoryType, SourceKind, Vector
from cognitive_memory.errors import IndexMismatchError, RejectedPointsError, StoreLockedError
from cognitive_memory.index import (
    ArrayVectorStore,
    EdgeVectorStore,
    VectorFilter,
    VectorPoint,
    VectorStore,
    VectorStoreInfo,
    edge_store,
    payload_for,
)
from cognitive_memory.index.qdrant_store import QdrantServerVectorStore

DIM = 16


def _open(kind: str, tmp_path: Path) -> VectorStore:
    if kind == "edge":
        return EdgeVectorStore(tmp_path / "edge", DIM)
    if kind == "qdrant-client":
        return QdrantServerVectorStore(QdrantClient(path=str(tmp_path / "qc")), "memories", "local", DIM)
    return ArrayVectorStore(DIM)


def _as_stored(store: VectorStore, vector: Vector) -> Vector:
    """What ``store`` scores against: Edge keeps its vectors as 16-bit floats."""
    return vector.astype(np.float16).astype(np.float32) if isinstance(store, EdgeVectorStore) else vector


def _tolerance(store: VectorStore) -> float:
    return 2e-3 if isinstance(store, EdgeVectorStore) else 1e-5


@pytest.fixture(params=["edge", "qdrant-client", "array"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorStore]:
    opened = _open(request.param, tmp_path)
    yield opened
    opened.close()


def _vectors(count: int, seed: int = 7) -> list[Vector]:
    raw = np.random.default_rng(seed).normal(size=(count, DIM))
    return [row.astype(np.float32) for row in raw / np.linalg.norm(raw, axis=1, keepdims=True)]


def _points(count: int, payload: dict[str, Any] | None = None, seed: int = 7) -> list[VectorPoint]:
    return [VectorPoint(str(uuid.uuid4()), v, dict(payload or {})) for v in _vectors(count, seed)]


def _memory_point(
    vector: Vector,
    level: HierarchyLevel,
    kind: MemoryType,
    tags: tuple[str, ...] = (),
    loader: str | None = None,
    session: str | None = None,
) -> VectorPoint:
    now = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    memory = CognitiveMemory(
        str(uuid.uuid4()),
        "text",
        level,
        kind,
        now,
        now,
        tags=tags,
        source=SourceKind.of(loader),
        session_id=session,
    )
    return VectorPoint(memory.id, vector, payload_for(memory))


@pytest.fixture
def labelled(store: VectorStore) -> dict[str, str]:
    """Five points with distinct payloads in ``store``; name -> id."""
    vectors = _vectors(5, seed=3)
    points = {
        "concept": _memory_point(
            vectors[0], HierarchyLevel.CONCEPT, MemoryType.SEMANTIC, ("docker", "ci"), session="s1"
        ),
        "context": _memory_point(vectors[1], HierarchyLevel.CONTEXT, MemoryType.SEMANTIC, ("python",)),
        "episode": _memory_point(
            vectors[2], HierarchyLevel.EPISODE, MemoryType.EPISODIC, ("ci",), session="s2"
        ),
        "lesson": _memory_point(
            vectors[3], HierarchyLevel.CONCEPT, MemoryType.SEMANTIC, ("python", "ci"), "session_lesson"
        ),
        "git": _memory_point(vectors[4], HierarchyLevel.EPISODE, MemoryType.EPISODIC, (), "git", "s1"),
    }
    store.upsert(list(points.values()))
    return {name: point.id for name, point in points.items()}


def _found(store: VectorStore, where: VectorFilter, labelled: dict[str, str]) -> set[str]:
    names = {point_id: name for name, point_id in labelled.items()}
    return {names[hit.id] for hit in store.search(_vectors(1, seed=99)[0], 10, where)}


def test_an_empty_store_counts_zero_and_finds_nothing(store: VectorStore) -> None:
    assert store.count() == 0
    assert store.search(_vectors(1)[0], 5) == []


def test_search_ranks_every_point_by_cosine_like_brute_force(store: VectorStore) -> None:
    points = _points(20)
    store.upsert(points)
    query = points[7].vector

    hits = store.search(query, 20)

    expected = sorted(points, key=lambda p: float(_as_stored(store, p.vector) @ query), reverse=True)
    assert [hit.id for hit in hits] == [p.id for p in expected]
    exact = [float(p.vector @ query) for p in expected]
    assert [hit.score for hit in hits] == pytest.approx(exact, abs=_tolerance(store))


def test_the_identical_vector_comes_first_with_score_one(store: VectorStore) -> None:
    points = _points(20)
    store.upsert(points)

    hits = store.search(points[3].vector, 5)

    assert hits[0].id == points[3].id
    assert hits[0].score == pytest.approx(1.0, abs=_tolerance(store))
    assert hits[0].score <= 1.0 + 1e-6  # 16-bit rounding gave Edge's dot product 1.0002: it is clamped


def test_search_returns_at_most_limit_hits(store: VectorStore) -> None:
    store.upsert(_points(10))

    assert len(store.search(_vectors(1, seed=1)[0], 3)) == 3


def test_search_many_answers_each_vector_as_search_does(store: VectorStore) -> None:
    points = _points(20, {"project": "a"})
    store.upsert(points)
    queries = [points[2].vector, points[9].vector, _vectors(1, seed=3)[0]]
    where = VectorFilter(projects=("a",))

    answers = store.search_many(queries, 4, where)

    assert answers == [store.search(query, 4, where) for query in queries]
    assert [hits[0].id for hits in answers[:2]] == [points[2].id, points[9].id]
    assert store.search_many([], 4) == []


def test_upserting_an_existing_id_replaces_vector_and_payload(store: VectorStore) -> None:
    points = _points(5, {"hierarchy_level": 0, "tags": []})
    store.upsert(points)
    replacement = _vectors(1, seed=42)[0]

    store.upsert([VectorPoint(points[0].id, replacement, {"hierarchy_level": 2, "tags": []})])

    assert store.count() == 5
    top = store.search(replacement, 1)[0]
    assert (top.id, top.score) == (points[0].id, pytest.approx(1.0, abs=_tolerance(store)))
    assert [h.id for h in store.search(replacement, 5, VectorFilter(hierarchy_levels=(2,)))] == [points[0].id]
    assert points[0].id not in {
        h.id for h in store.search(replacement, 5, VectorFilter(hierarchy_levels=(0,)))
    }


def test_deleted_points_are_gone_from_count_and_search(store: VectorStore) -> None:
    points = _points(4)
    store.upsert(points)

    store.delete([points[0].id, points[2].id])

    assert store.count() == 2
    assert {hit.id for hit in store.search(points[0].vector, 10)} == {points[1].id, points[3].id}


def test_deleting_an_unknown_id_changes_nothing(store: VectorStore) -> None:
    store.upsert(_points(2))

    store.delete([str(uuid.uuid4())])

    assert store.count() == 2


def test_empty_upsert_and_delete_are_no_ops(store: VectorStore) -> None:
    store.upsert([])
    store.delete([])

    assert store.count() == 0


def test_a_point_the_index_cannot_take_refuses_the_whole_call_and_names_it(store: VectorStore) -> None:
    """Issue #27: Edge raised a bare ValueError for an id that is not a UUID (a crash of every
    command that replayed it), and rewrote other spellings of a UUID to ids SQLite does not know."""
    (good,) = _points(1)
    unit = good.vector
    bad = {
        "my-note-1": unit,
        str(uuid.UUID(int=27)).upper(): unit,
        uuid.uuid4().hex: unit,
        str(uuid.uuid4()): unit[:-1],
        str(uuid.uuid4()): np.full(DIM, np.nan, dtype=np.float32),
    }

    with pytest.raises(RejectedPointsError) as refused:
        store.upsert([good, *(VectorPoint(point_id, vector, {}) for point_id, vector in bad.items())])

    assert sorted(refused.value.rejected) == sorted(bad)
    assert "is not a UUID" in refused.value.rejected["my-note-1"]
    assert f"has {DIM - 1} numbers where the index holds {DIM}" in " ".join(refused.value.rejected.values())
    assert store.count() == 0  # nothing of the call was written
    store.delete(["my-note-1", good.id])  # an id the index could never hold is skipped
    store.upsert([good])
    assert store.ids() == [good.id]


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        pytest.param(VectorFilter(), {"concept", "context", "episode", "lesson", "git"}, id="empty-filter"),
        pytest.param(VectorFilter(hierarchy_levels=(0,)), {"concept", "lesson"}, id="one-level"),
        pytest.param(VectorFilter(hierarchy_levels=(1, 2)), {"context", "episode", "git"}, id="two-levels"),
        pytest.param(VectorFilter(memory_types=("episodic",)), {"episode", "git"}, id="memory-type"),
        pytest.param(VectorFilter(loader_types=("session_lesson",)), {"lesson"}, id="loader-type"),
        pytest.param(VectorFilter(loader_types=("git", "markdown")), {"git"}, id="loader-type-any"),
        pytest.param(VectorFilter(tags=("python",)), {"context", "lesson"}, id="one-tag"),
        pytest.param(VectorFilter(tags=("docker", "absent")), {"concept"}, id="tag-match-any"),
        pytest.param(VectorFilter(tags=("absent",)), set(), id="unknown-tag"),
        pytest.param(
            VectorFilter(hierarchy_levels=(0,), tags=("ci",), loader_types=("session_lesson",)),
            {"lesson"},
            id="fields-combine-with-and",
        ),
        pytest.param(VectorFilter(sessions=("s1",)), {"concept", "git"}, id="session"),
        pytest.param(VectorFilter(sessions=("s1", "s2")), {"concept", "episode", "git"}, id="session-any"),
        pytest.param(VectorFilter(sessions=("s1",), hierarchy_levels=(2,)), {"git"}, id="session-and-level"),
        pytest.param(VectorFilter(sessions=("s3",)), set(), id="unknown-session"),
    ],
)
def test_filters_keep_only_matching_payloads(
    store: VectorStore, labelled: dict[str, str], where: VectorFilter, expected: set[str]
) -> None:
    assert _found(store, where, labelled) == expected


@pytest.mark.parametrize("kind", ["edge", "qdrant-client", "array"])
def test_a_new_store_holds_the_sessions_and_keeps_them_marked(kind: str, tmp_path: Path) -> None:
    store = _open(kind, tmp_path)
    assert store.has_sessions()
    store.mark_sessions()  # again, as a copy from SQLite ends
    assert store.has_sessions()
    store.close()
    reopened = _open(kind, tmp_path)
    try:
        assert reopened.has_sessions()
    finally:
        reopened.close()


def test_info_reports_the_vector_count(store: VectorStore) -> None:
    store.upsert(_points(6))

    info = store.info()

    assert isinstance(info, VectorStoreInfo)
    assert info.vector_count == 6
    assert info.status == "ok"


def test_edge_store_keeps_its_points_when_reopened(tmp_path: Path) -> None:
    points = _points(3, {"hierarchy_level": 2, "tags": ["ci"]})
    first = EdgeVectorStore(tmp_path / "edge", DIM)
    first.upsert(points)
    first.close()

    reopened = EdgeVectorStore(tmp_path / "edge", DIM)
    try:
        assert reopened.count() == 3
        assert reopened.search(points[1].vector, 1, VectorFilter(tags=("ci",)))[0].id == points[1].id
    finally:
        reopened.close()


def test_a_shard_kept_until_the_process_ends_is_flushed_and_opens_again_in_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(edge_store, "_kept_until_exit", {})  # keep_shards_until_exit, undone after
    points = _points(3)
    edge = EdgeVectorStore(tmp_path / "edge", DIM)
    edge.upsert(points)
    edge.close()
    with (tmp_path / ".edge.lock").open("a") as guard, pytest.raises(BlockingIOError):
        fcntl.flock(guard, fcntl.LOCK_EX | fcntl.LOCK_NB)  # still held: others wait for the exit

    again = EdgeVectorStore(tmp_path / "edge", DIM)
    try:
        assert again.count() == 3
        assert {hit.id for hit in again.search(points[0].vector, 3)} == {p.id for p in points}
    finally:
        again.close()
        edge_store._close_kept(tmp_path / "edge")  # this process goes on: let go of it


def test_a_second_edge_store_on_an_open_directory_is_refused(tmp_path: Path) -> None:
    directory = tmp_path / "edge"
    first = EdgeVectorStore(directory, DIM)
    try:
        with pytest.raises(StoreLockedError) as caught:
            EdgeVectorStore(directory, DIM)
    finally:
        first.close()

    assert caught.value.code == "store_locked"
    assert str(directory) in caught.value.message
    EdgeVectorStore(directory, DIM).close()  # the lock is released with the first store


def test_qdrant_collection_of_another_dimension_is_an_index_mismatch(tmp_path: Path) -> None:
    _open("qdrant-client", tmp_path).close()
    client = QdrantClient(path=str(tmp_path / "qc"))
    try:
        with pytest.raises(IndexMismatchError) as caught:
            QdrantServerVectorStore(client, "memories", "local", DIM * 2)
    finally:
        client.close()

    assert caught.value.code == "index_mismatch"
    assert "memories" in caught.value.message


def test_an_edge_shard_of_another_dimension_is_an_index_mismatch(tmp_path: Path) -> None:
    EdgeVectorStore(tmp_path / "edge", DIM).close()

    with pytest.raises(IndexMismatchError) as caught:
        EdgeVectorStore(tmp_path / "edge", DIM * 2)

    assert caught.value.code == "index_mismatch"
    assert f"expected vector size {DIM * 2}, but got {DIM}" in caught.value.message
    assert "memory_system doctor --repair" in caught.value.message
    EdgeVectorStore(tmp_path / "edge", DIM).close()  # the lock was released and the shard is intact


def test_building_the_index_keeps_every_answer(store: VectorStore) -> None:
    points = _points(300)
    store.upsert(points)
    query = points[17].vector
    before = [hit.id for hit in store.search(query, 5)]
    assert not store.build_index(1_000)  # too few unindexed vectors: nothing to do
    store.build_index(1)
    assert [hit.id for hit in store.search(query, 5)][0] == points[17].id == before[0]
    assert store.count() == 300


def test_the_edge_count_follows_points_written_again_and_deleted_across_segments(tmp_path: Path) -> None:
    edge = EdgeVectorStore(tmp_path / "edge", 384)
    try:
        raw = np.random.default_rng(4).normal(size=(3_020, 384)).astype(np.float32)
        raw /= np.linalg.norm(raw, axis=1, keepdims=True)
        points = [VectorPoint(str(uuid.uuid4()), row, {"hierarchy_level": 0, "tags": []}) for row in raw]
        edge.upsert(points[:3_000])
        assert edge.build_index(1)  # an indexed segment: the writes below move points out of it
        rewritten = [VectorPoint(p.id, p.vector, {"hierarchy_level": 1, "tags": []}) for p in points[:100]]
        edge.upsert(rewritten)
        edge.upsert(rewritten[:50])
        edge.delete([p.id for p in points[50:150]])  # 50 rewritten, 50 not
        edge.upsert(points[3_000:])
        assert edge.info().details["segments"] > 1

        assert edge.count() == len(edge.ids()) == 3_000 - 100 + 20
    finally:
        edge.close()


def test_edge_builds_an_hnsw_index_when_enough_vectors_are_unindexed(tmp_path: Path) -> None:
    edge = EdgeVectorStore(tmp_path / "edge", 384)
    try:
        # 3,000 vectors: below Edge's default indexing threshold (about 6,600), above ours.
        raw = np.random.default_rng(3).normal(size=(3_000, 384)).astype(np.float32)
        raw /= np.linalg.norm(raw, axis=1, keepdims=True)
        edge.upsert([VectorPoint(str(uuid.uuid4()), row, {}) for row in raw])
        assert edge.info().details["indexed_vectors"] == 0
        assert not edge.build_index(5_000)
        assert edge.build_index(2_000)
        assert edge.info().details["indexed_vectors"] == 3_000
        assert not edge.build_index(2_000)  # nothing left to index
    finally:
        edge.close()


def test_a_precise_search_finds_what_the_default_search_finds(store: VectorStore) -> None:
    points = _points(200)
    store.upsert(points)
    store.build_index(1)
    for point in points[:5]:
        precise = store.search(point.vector, 10, precise=True)
        assert precise[0].id == point.id
        assert [hit.id for hit in precise] == [hit.id for hit in store.search(point.vector, 10)]
