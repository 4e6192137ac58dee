"""SQLite, the source of truth: schema, round trips, the outbox, bookkeeping and atomic writes."""

from __future__ import annotations

import dataclasses
import sqlite3
import zlib
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cognitive_memory.core.memory import CognitiveMemory, HierarchyLevel, MemoryType
from cognitive_memory.errors import StorageError
from cognitive_memory.index.vector_store import VectorFilter
from cognitive_memory.storage import SQLiteMemoryStore
from cognitive_memory.storage.migrations import MIGRATIONS, apply_migrations

STORED_AT = datetime(2024, 5, 1, 12, 30, 15, 123456, tzinfo=UTC)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "db" / "memories.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[SQLiteMemoryStore]:
    opened = SQLiteMemoryStore(db_path)
    yield opened
    opened.close()


def _memory(memory_id: str, **changes: Any) -> CognitiveMemory:
    vector = np.random.default_rng(zlib.crc32(memory_id.encode())).normal(size=384).astype(np.float32)
    fields: dict[str, Any] = {
        "id": memory_id,
        "content": f"memory {memory_id}",
        "hierarchy_level": HierarchyLevel.CONTEXT,
        "memory_type": MemoryType.SEMANTIC,
        "created_date": STORED_AT,
        "timestamp": STORED_AT,
        "cognitive_embedding": vector / np.linalg.norm(vector),
    }
    return CognitiveMemory(**(fields | changes))


def _rows(db_path: Path, sql: str) -> list[Any]:
    with closing(sqlite3.connect(db_path)) as conn:
        return conn.execute(sql).fetchall()


def test_the_database_runs_in_wal_mode(store: SQLiteMemoryStore, db_path: Path) -> None:
    assert _rows(db_path, "PRAGMA journal_mode") == [("wal",)]


def test_every_migration_is_recorded_by_name(store: SQLiteMemoryStore, db_path: Path) -> None:
    recorded = _rows(db_path, "SELECT name FROM schema_migrations ORDER BY name")

    assert [name for (name,) in recorded] == [name for name, _ in MIGRATIONS]


def test_reopening_applies_no_migration_twice(store: SQLiteMemoryStore, db_path: Path) -> None:
    store.memories.add([_memory("kept")])
    before = _rows(db_path, "SELECT name, applied_at FROM schema_migrations")
    store.close()

    SQLiteMemoryStore(db_path).close()
    with closing(sqlite3.connect(db_path)) as conn:
        assert apply_migrations(conn) == []

    assert _rows(db_path, "SELECT name, applied_at FROM schema_migrations") == before
    assert _rows(db_path, "SELECT id FROM memories") == [("kept",)]


def test_add_then_get_round_trips_every_field(store: SQLiteMemoryStore) -> None:
    plus_two = timezone(timedelta(hours=2))
    memory = _memory(
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
        strength=0.6,
        metadata={"project": "café", "loader_type": "git", "session_id": "s-1", "nested": {"k": [1, "二"]}},
        tags=("ci", "docker", "日本語"),
        dimensions={"urgency": 0.25, "valence": -0.5},
    )

    store.memories.add([memory])
    [loaded] = store.memories.get(["full"])

    assert loaded == memory  # every field but the embedding
    assert memory.cognitive_embedding is not None and loaded.cognitive_embedding is not None
    assert loaded.cognitive_embedding.dtype == np.float32
    assert loaded.cognitive_embedding.tobytes() == memory.cognitive_embedding.tobytes()
    assert loaded.created_date.utcoffset() == timedelta(hours=2)


def test_vectors_returns_the_stored_embeddings(store: SQLiteMemoryStore) -> None:
    first, second = _memory("a"), _memory("b")
    store.memories.add([first, second])

    vectors = store.memories.vectors(["b", "a", "missing"])

    assert set(vectors) == {"a", "b"}
    assert first.cognitive_embedding is not None
    np.testing.assert_array_equal(vectors["a"], first.cognitive_embedding)


def test_add_queues_one_outbox_row_per_memory(store: SQLiteMemoryStore) -> None:
    store.memories.add([_memory("a"), _memory("b")])
    store.memories.add([_memory("c")])

    assert sorted(store.outbox.pending()) == [("a", "upsert"), ("b", "upsert"), ("c", "upsert")]


def test_clear_outbox_removes_only_the_given_ids(store: SQLiteMemoryStore) -> None:
    store.memories.add([_memory("a"), _memory("b"), _memory("c")])

    store.outbox.clear(["a", "c"])

    assert store.outbox.pending() == [("b", "upsert")]


def test_add_records_the_time_of_the_last_storage(store: SQLiteMemoryStore) -> None:
    before = datetime.now(UTC)
    store.memories.add([_memory("a")])

    assert before - timedelta(seconds=1) <= store.properties.activity()["last_storage"] <= datetime.now(UTC)


def test_record_access_counts_each_access_and_stamps_the_time(store: SQLiteMemoryStore) -> None:
    store.memories.add([_memory("a"), _memory("b")])
    first, second = STORED_AT + timedelta(hours=1), STORED_AT + timedelta(hours=2)

    store.memories.record_access(["a", "b"], first)
    store.memories.record_access(["a", "unknown"], second)

    a, b = store.memories.get(["a", "b"])
    assert (a.access_count, a.last_accessed) == (2, second)
    assert (b.access_count, b.last_accessed) == (1, first)
    assert store.properties.activity()["last_retrieval"] == second


def test_counts_by_level_type_and_session_lessons(store: SQLiteMemoryStore) -> None:
    lesson = {"loader_type": "session_lesson"}
    store.memories.add(
        [
            _memory("c1", hierarchy_level=HierarchyLevel.CONCEPT, metadata=lesson),
            _memory("c2", hierarchy_level=HierarchyLevel.CONCEPT, metadata={"loader_type": "git"}),
            _memory("x1"),
            _memory("e1", hierarchy_level=HierarchyLevel.EPISODE, memory_type=MemoryType.EPISODIC),
            _memory(
                "e2",
                hierarchy_level=HierarchyLevel.EPISODE,
                memory_type=MemoryType.EPISODIC,
                metadata=lesson,
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
    store.memories.add([_memory("a"), _memory("b"), _memory("c")])

    assert [m.id for m in store.memories.get(["c", "missing", "a", "b"])] == ["c", "a", "b"]
    assert store.memories.get([]) == []


def test_a_failed_batch_leaves_nothing_behind(store: SQLiteMemoryStore) -> None:
    store.memories.add([_memory("existing")])

    with pytest.raises(StorageError):
        store.memories.add([_memory("new"), _memory("existing")])

    assert store.memories.get(["new"]) == []
    assert store.memories.counts().total == 1
    assert store.outbox.pending() == [("existing", "upsert")]


def test_a_batch_with_a_duplicate_id_stores_neither(store: SQLiteMemoryStore) -> None:
    with pytest.raises(StorageError) as caught:
        store.memories.add([_memory("twin"), _memory("twin", content="second")])

    assert caught.value.code == "storage_error"
    assert store.memories.counts().total == 0
    assert store.outbox.pending() == []


def test_a_memory_without_an_embedding_is_refused(store: SQLiteMemoryStore) -> None:
    with pytest.raises(StorageError):
        store.memories.add([_memory("ok"), dataclasses.replace(_memory("bare"), cognitive_embedding=None)])

    assert store.memories.counts().total == 0


def test_meta_values_are_kept_and_overwritten(store: SQLiteMemoryStore) -> None:
    assert store.properties.get("encoder") is None

    store.properties.set("encoder", "hash-384:384")
    store.properties.set("encoder", "all-MiniLM-L6-v2:384")

    assert store.properties.get("encoder") == "all-MiniLM-L6-v2:384"


def test_each_memory_keeps_only_its_most_recently_strengthened_co_recall_links(
    store: SQLiteMemoryStore,
) -> None:
    ids = [f"m{n}" for n in range(8)]
    store.memories.add([_memory(memory_id) for memory_id in ids])
    for other in ids[1:]:
        store.links.strengthen([("m0", other)], 0.1, keep=3)
    store.links.strengthen([("m1", "m2")], 0.1, keep=3)

    graph = store.links.neighbours(ids)

    assert sorted(target for target, _ in graph["m0"]) == ["m5", "m6", "m7"]
    # A dropped link goes in both directions; m1 keeps its link to m2, made later.
    assert [target for target, _ in graph["m1"]] == ["m2"]
    assert all(("m0", 0.1) in graph[kept] for kept in ("m5", "m6", "m7"))
    assert "m0" not in dict(graph.get("m4", []))


def test_a_memory_s_terms_are_kept_beside_it_and_go_with_it(store: SQLiteMemoryStore) -> None:
    store.memories.add([_memory("kept", content="Running the nightly backups"), _memory("gone")])

    (row,) = store.memories.ranking_rows(["kept"])
    shares = store.words.shares("run backup nightly", [row])
    store.memories.delete(["gone"])

    assert row.terms == frozenset({"run", "the", "nightli", "backup"})
    assert shares == {"kept": 1.0}
    with closing(sqlite3.connect(store.path)) as conn:
        assert conn.execute("SELECT count(*) FROM memory_words").fetchone() == (1,)


def test_word_shares_tokenize_a_memory_whose_terms_were_never_kept(store: SQLiteMemoryStore) -> None:
    store.memories.add([_memory("old", content="The blue bucket holds the backups")])
    with closing(sqlite3.connect(store.path)) as conn, conn:
        conn.execute("DELETE FROM memory_words")

    (row,) = store.memories.ranking_rows(["old"])

    assert row.terms is None
    assert store.words.shares("blue bucket", [row]) == {"old": 1.0}


def test_recording_an_access_strengthens_the_links_of_memories_recalled_together(
    store: SQLiteMemoryStore,
) -> None:
    store.memories.add([_memory("a"), _memory("b"), _memory("c")])

    store.memories.record_access(["a", "b"], STORED_AT, co_recalled=[("a", "b")])
    store.memories.record_access(["a", "b"], STORED_AT, co_recalled=[("a", "b")])

    graph = store.links.neighbours(["a", "b", "c"])
    assert graph["a"] == [("b", pytest.approx(0.2))] and graph["b"] == [("a", pytest.approx(0.2))]
    assert "c" not in graph


def test_only_in_says_whether_every_memory_is_in_the_given_projects(store: SQLiteMemoryStore) -> None:
    assert store.memories.only_in(["default"])  # an empty store: nothing lies outside
    store.memories.add(
        [_memory("m1", project="alpha"), _memory("m2", project="beta"), _memory("m3", project="gamma")]
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


def test_word_weights_follow_every_write_to_the_lexical_index(
    store: SQLiteMemoryStore, db_path: Path
) -> None:
    """Word counts are kept between recalls, but never past a write: another memory holding
    "apple" makes it commoner, so the memory holding only apple gets a smaller share, exactly
    the share a store opened afresh computes."""
    store.memories.add([_memory("apple", content="apple pie"), _memory("banana", content="banana bread")])
    (row,) = store.memories.ranking_rows(["apple"])
    before = store.words.shares("apple banana", [row])
    assert store.words.shares("apple banana", [row]) == before  # kept, same answer

    store.memories.add([_memory("more", content="apple juice")])
    after = store.words.shares("apple banana", [row])
    store.memories.delete(["more"])
    again = store.words.shares("apple banana", [row])
    fresh = SQLiteMemoryStore(db_path)
    try:
        opened = fresh.words.shares("apple banana", [row])
    finally:
        fresh.close()

    assert after["apple"] < before["apple"]
    assert again == before == opened
