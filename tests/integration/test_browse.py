"""Browsing SQLite without a query: filters, the four orders, keyset pages and earlier versions."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cognitive_memory.core.memory import CognitiveMemory, HierarchyLevel, MemoryType
from cognitive_memory.core.uses import Use
from cognitive_memory.index import VectorFilter
from cognitive_memory.storage import SQLiteMemoryStore

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def memory(memory_id: str, minute: int = 0, **changes: Any) -> CognitiveMemory:
    vector = np.zeros(384, dtype=np.float32)
    vector[0] = 1.0
    at = T0 + timedelta(minutes=minute)
    fields: dict[str, Any] = {
        "id": memory_id,
        "content": f"memory {memory_id}",
        "hierarchy_level": HierarchyLevel.CONTEXT,
        "memory_type": MemoryType.SEMANTIC,
        "created_date": at,
        "timestamp": at,
        "cognitive_embedding": vector,
        "session_id": None,
    }
    return CognitiveMemory(**(fields | changes))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteMemoryStore]:
    opened = SQLiteMemoryStore(tmp_path / "memories.db")
    yield opened
    opened.close()


def all_pages(store: SQLiteMemoryStore, order_by: str, limit: int, where: VectorFilter) -> list[str]:
    ids: list[str] = []
    cursor: str | None = None
    while True:
        page = store.memories.browse(where, order_by, limit, cursor)
        ids += [m.id for m in page.memories]
        if page.next_cursor is None:
            return ids
        cursor = page.next_cursor


def test_pages_hold_every_match_once_newest_first_with_the_total(store: SQLiteMemoryStore) -> None:
    store.memories.add([memory(f"m{n:02}", minute=n // 2) for n in range(25)])

    first = store.memories.browse(VectorFilter(), "created", 10)

    assert first.total == 25 and len(first.memories) == 10
    assert all_pages(store, "created", 10, VectorFilter()) == [f"m{n:02}" for n in reversed(range(25))]


def test_memories_stored_between_pages_neither_repeat_nor_push_one_out(store: SQLiteMemoryStore) -> None:
    store.memories.add([memory(f"old{n}", minute=n) for n in range(6)])
    first = store.memories.browse(VectorFilter(), "created", 3)

    store.memories.add([memory("newer", minute=60), memory("same-minute", minute=3)])
    rest = store.memories.browse(VectorFilter(), "created", 10, first.next_cursor)

    assert [m.id for m in first.memories] == ["old5", "old4", "old3"]
    assert [m.id for m in rest.memories] == ["old2", "old1", "old0"]
    assert rest.next_cursor is None and rest.total == 8


def test_a_cursor_the_previous_version_handed_out_pages_on_from_its_row(store: SQLiteMemoryStore) -> None:
    store.memories.add([memory(f"m{n}", minute=n) for n in range(10)])
    # What the version before opaque cursors returned after m5 (minute 5, rowid 6), newest first.
    handed_out = "eyJvIjoiY3JlYXRlZCIsInYiOjE3MTQ1NTQzMDAuMCwiciI6Nn0"

    rest = store.memories.browse(VectorFilter(), "created", 3, handed_out)

    assert [m.id for m in rest.memories] == ["m4", "m3", "m2"]
    assert [m.id for m in store.memories.browse(VectorFilter(), "created", 3, rest.next_cursor).memories] == [
        "m1",
        "m0",
    ]


def test_each_order_sorts_highest_first_and_never_accessed_last(store: SQLiteMemoryStore) -> None:
    store.memories.add(
        [
            memory("a", 0, importance_score=0.2, access_count=5),
            memory("b", 1, importance_score=0.9, access_count=1),
            memory("c", 2, importance_score=0.5, access_count=5),
            memory("d", 3, importance_score=0.5),
        ]
    )
    store.memories.record_uses([Use(("a",), (), T0 + timedelta(days=2), 0.0)])
    store.memories.record_uses([Use(("b",), (), T0 + timedelta(days=1), 0.0)])

    def order(order_by: str) -> list[str]:
        return all_pages(store, order_by, 1, VectorFilter())

    assert order("created") == ["d", "c", "b", "a"]
    assert order("importance") == ["b", "d", "c", "a"]
    assert order("access_count") == ["a", "c", "b", "d"]
    assert order("last_accessed") == ["a", "b", "d", "c"]


def test_filters_select_by_tag_project_kind_and_store_time(store: SQLiteMemoryStore) -> None:
    store.memories.add(
        [
            memory("ops-api", 0, tags=("ops", "db"), project="api"),
            memory("ops-web", 1, tags=("ops",), project="web"),
            memory("plain-api", 2, project="api", hierarchy_level=HierarchyLevel.CONCEPT),
            memory("late-global", 90, tags=("db",), project="global", memory_type=MemoryType.EPISODIC),
        ]
    )
    hour = (T0 + timedelta(hours=1)).timestamp()

    def ids(**fields: Any) -> list[str]:
        return all_pages(store, "created", 100, VectorFilter(**fields))

    assert ids(tags=("db",)) == ["late-global", "ops-api"]
    assert ids(projects=("api", "global")) == ["late-global", "plain-api", "ops-api"]
    assert ids(tags=("ops",), projects=("api",)) == ["ops-api"]
    assert ids(hierarchy_levels=(0,)) == ["plain-api"]
    assert ids(memory_types=("episodic",)) == ["late-global"]
    assert ids(created_after=hour) == ["late-global"]
    assert ids(created_before=hour) == ["plain-api", "ops-web", "ops-api"]
    assert ids(created_after=T0.timestamp(), created_before=T0.timestamp() + 60) == ["ops-api"]
    assert ids(tags=("nothing",)) == []
    assert store.memories.browse(VectorFilter(tags=("nothing",)), "created", 5).total == 0


def test_versions_are_read_oldest_first_for_the_ids_asked(store: SQLiteMemoryStore) -> None:
    store.memories.add([memory("edited"), memory("untouched", 1)])
    with closing(sqlite3.connect(store.path)) as conn, conn:
        conn.executemany(
            "INSERT INTO memory_versions (memory_id, version, content, hierarchy_level, memory_type, "
            "importance_score, tags, metadata, project, replaced_at, replaced_by_session) "
            "VALUES (?, ?, ?, 1, 'semantic', 0.5, ?, ?, 'default', ?, ?)",
            [
                ("edited", 2, "second text", json.dumps(["b"]), "{}", 200.0, None),
                ("edited", 1, "first text", json.dumps(["a"]), json.dumps({"k": 1}), 100.0, "s1"),
            ],
        )

    versions = store.history.of(["edited", "untouched", "unknown"])

    assert list(versions) == ["edited"]
    assert [(v.version, v.content, v.tags, v.metadata) for v in versions["edited"]] == [
        (1, "first text", ("a",), {"k": 1}),
        (2, "second text", ("b",), {}),
    ]
    assert versions["edited"][0].replaced_by_session == "s1"
    assert store.history.of([]) == {}
