"""The memories repository: round trips, vectors, access, counts, atomic batches, projects."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import pytest

from cognitive_memory.core.memory import HierarchyLevel, MemoryType, SourceKind
from cognitive_memory.core.uses import Use
from cognitive_memory.errors import StorageError
from cognitive_memory.index.vector_store import VectorFilter
from cognitive_memory.storage import SQLiteMemoryStore
from tests.integration.storage.stored import STORED_AT, stored_memory


def test_add_then_get_round_trips_every_field(store: SQLiteMemoryStore) -> None:
    plus_two = timezone(timedelta(hours=2))
    memory = stored_memory(
        "full",
        content="Ünïcödé content — with “quotes” and emoji 🚀",
        hierarchy_level=HierarchyLevel.EPISODE,
        memory_type=MemoryType.EPISODIC,
        created_date=datetime(2024, 5, 1, 14, 30, 15, 123456, tzinfo=plus_two),
        modified_date=datetime(2024, 4, 30, 9, 0, tzinfo=UTC),
        source_date=datetime(2023, 12, 24, 18, 0, 1, 5, tzinfo=UTC),
        last_accessed=datetime(2024, 5, 2, 8, 0, 0, 654321, tzinfo=UTC),
        access_count=4,
        importance_score=0.75,
        metadata={"project": "café", "session_id": "s-1", "nested": {"k": [1, "二"]}},
        tags=("ci", "docker", "日本語"),
        source=SourceKind.GIT,
        speaker="Ada",
        origin="/notes/ci.md",
        key="ci-setup",
    )

    store.memories.add([memory])
    [loaded] = store.memories.get(["full"])

    assert loaded == memory  # every field but the embedding
    assert memory.cognitive_embedding is not None and loaded.cognitive_embedding is not None
    assert loaded.cognitive_embedding.dtype == np.float32
    assert loaded.cognitive_embedding.tobytes() == memory.cognitive_embedding.tobytes()
    assert loaded.created_date.utcoffset() == timedelta(hours=2)


def test_vectors_returns_the_stored_embeddings(store: SQLiteMemoryStore) -> None:
    first, second = stored_memory("a"), stored_memory("b")
    store.memories.add([first, second])

    vectors = store.memories.vectors(["b", "a", "missing"])

    assert set(vectors) == {"a", "b"}
    assert first.cognitive_embedding is not None
    np.testing.assert_array_equal(vectors["a"], first.cognitive_embedding)


def test_recorded_uses_count_each_access_and_stamp_the_time(store: SQLiteMemoryStore) -> None:
    store.memories.add([stored_memory("a"), stored_memory("b")])
    first, second = STORED_AT + timedelta(hours=1), STORED_AT + timedelta(hours=2)

    store.memories.record_uses([Use(("a", "b"), (), first, 0.0)])
    store.memories.record_uses([Use(("a", "unknown"), (), second, 0.0)])

    a, b = store.memories.get(["a", "b"])
    assert (a.access_count, a.last_accessed) == (2, second)
    assert (b.access_count, b.last_accessed) == (1, first)
    assert store.properties.activity()["last_retrieval"] == second


def test_counts_by_level_type_and_session_lessons(store: SQLiteMemoryStore) -> None:
    lesson = SourceKind.SESSION_LESSON
    store.memories.add(
        [
            stored_memory("c1", hierarchy_level=HierarchyLevel.CONCEPT, source=lesson),
            stored_memory("c2", hierarchy_level=HierarchyLevel.CONCEPT, source=SourceKind.GIT),
            stored_memory("x1"),
            stored_memory("e1", hierarchy_level=HierarchyLevel.EPISODE, memory_type=MemoryType.EPISODIC),
            stored_memory(
                "e2",
                hierarchy_level=HierarchyLevel.EPISODE,
                memory_type=MemoryType.EPISODIC,
                source=lesson,
            ),
        ]
    )

    counts = store.memories.counts()

    assert counts.total == 5
    assert counts.by_level == {0: 2, 1: 1, 2: 2}
    assert counts.by_type == {"episodic": 2, "semantic": 3}
    assert counts.session_lessons == 2


def test_counts_of_an_empty_store_are_all_zero(store: SQLiteMemoryStore) -> None:
    counts = store.memories.counts()

    assert (counts.total, counts.by_level, counts.by_type, counts.session_lessons) == (
        0,
        {0: 0, 1: 0, 2: 0},
        {"episodic": 0, "semantic": 0},
        0,
    )


def test_get_keeps_the_order_given_and_skips_unknown_ids(store: SQLiteMemoryStore) -> None:
    store.memories.add([stored_memory("a"), stored_memory("b"), stored_memory("c")])

    assert [m.id for m in store.memories.get(["c", "missing", "a", "b"])] == ["c", "a", "b"]
    assert store.memories.get([]) == []


def test_a_failed_batch_leaves_nothing_behind(store: SQLiteMemoryStore) -> None:
    store.memories.add([stored_memory("existing")])

    with pytest.raises(StorageError):
        store.memories.add([stored_memory("new"), stored_memory("existing")])

    assert store.memories.get(["new"]) == []
    assert store.memories.counts().total == 1
    assert store.outbox.pending() == [("existing", "upsert")]


def test_a_batch_with_a_duplicate_id_stores_neither(store: SQLiteMemoryStore) -> None:
    with pytest.raises(StorageError) as caught:
        store.memories.add([stored_memory("twin"), stored_memory("twin", content="second")])

    assert caught.value.code == "storage_error"
    assert store.memories.counts().total == 0
    assert store.outbox.pending() == []


def test_a_memory_without_an_embedding_is_refused(store: SQLiteMemoryStore) -> None:
    with pytest.raises(StorageError):
        store.memories.add(
            [stored_memory("ok"), dataclasses.replace(stored_memory("bare"), cognitive_embedding=None)]
        )

    assert store.memories.counts().total == 0


def test_only_in_says_whether_every_memory_is_in_the_given_projects(store: SQLiteMemoryStore) -> None:
    assert store.memories.only_in(["default"])  # an empty store: nothing lies outside
    store.memories.add(
        [
            stored_memory("m1", project="alpha"),
            stored_memory("m2", project="beta"),
            stored_memory("m3", project="gamma"),
        ]
    )

    assert store.memories.only_in(["alpha", "beta", "gamma"])
    assert store.memories.only_in(["gamma", "beta", "alpha", "delta"])
    assert not store.memories.only_in(["alpha", "gamma"])  # beta lies between them
    assert not store.memories.only_in(["beta", "gamma"])  # alpha below
    assert not store.memories.only_in(["alpha", "beta"])  # gamma above
    assert not store.memories.only_in([])
    # The vector index is searched without a filter that every memory passes, and only then.
    every = VectorFilter(projects=("alpha", "beta", "gamma"))
    assert store.memories.index_filter(every) is None and store.memories.index_filter(None) is None
    for kept in (
        VectorFilter(projects=("alpha", "beta")),
        VectorFilter(projects=("alpha", "beta", "gamma"), tags=("deploy",)),
        VectorFilter(projects=("alpha", "beta", "gamma"), created_after=0.0),
    ):
        assert store.memories.index_filter(kept) is kept


def test_a_key_names_one_live_memory_per_project(store: SQLiteMemoryStore) -> None:
    store.memories.add([stored_memory("a", key="deploy"), stored_memory("b", key="deploy", project="web")])

    with pytest.raises(StorageError):
        store.memories.add([stored_memory("c", key="deploy")])
    store.memories.add([stored_memory("d")])

    assert [m.id for m in store.memories.keyed(["deploy"], ["default"])] == ["a"]
    assert sorted(m.id for m in store.memories.keyed(["deploy", "other"], ["default", "web"])) == ["a", "b"]
    assert store.memories.get(["c"]) == []
    assert (store.memories.set_key("d", "deploy"), store.memories.set_key("d", "release")) == (False, True)
    assert store.memories.set_key("d", "again") is False  # it has one
    assert store.memories.get(["d"])[0].key == "release"


def test_latest_matching_keeps_to_the_sessions_and_the_rest_of_the_filter(store: SQLiteMemoryStore) -> None:
    later = STORED_AT + timedelta(minutes=1)
    store.memories.add(
        [
            stored_memory("early", session_id="s1", tags=("ops",)),
            stored_memory("late", session_id="s1", tags=("ops",), timestamp=later),
            stored_memory("untagged", session_id="s1"),
            stored_memory("elsewhere", session_id="s2", tags=("ops",)),
        ]
    )

    ops_of_s1 = VectorFilter(tags=("ops",), sessions=("s1",))

    assert store.memories.latest_matching(ops_of_s1, 10) == ["late", "early"]
    assert store.memories.latest_matching(ops_of_s1, 1) == ["late"]
    # An index made before the session was in its payload is given the ids of the session's
    # memories that match; one that holds it searches the filter as it is.
    assert store.memories.index_filter(ops_of_s1) == VectorFilter(ids=("late", "early"))
    assert store.memories.index_filter(VectorFilter(sessions=("s3",))) == VectorFilter(ids=())
    assert store.memories.index_filter(ops_of_s1, sessions_in_index=True) is ops_of_s1
    in_one_project = VectorFilter(projects=("default",), sessions=("s1",))
    assert store.memories.index_filter(in_one_project, sessions_in_index=True) is in_one_project
