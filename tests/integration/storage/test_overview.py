"""The overview of memories in SQLite: tags and sessions counted, bounded, and read in two grouped
statements whatever the number of memories, tags or sessions."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from cognitive_memory.core.memory import CognitiveMemory, HierarchyLevel, MemoryType
from cognitive_memory.index import VectorFilter
from cognitive_memory.storage import SQLiteMemoryStore
from cognitive_memory.storage.browse import matching_sql
from cognitive_memory.storage.dialect import SQLITE
from cognitive_memory.storage.overview import _SESSIONS, SessionSpan, TagCount

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def memory(n: int, tags: tuple[str, ...] = (), session: str | None = None, **changes: Any) -> CognitiveMemory:
    vector = np.zeros(384, dtype=np.float32)
    vector[0] = 1.0
    at = T0 + timedelta(minutes=n)
    fields: dict[str, Any] = {
        "id": f"m{n:05}",
        "content": f"memory {n}",
        "hierarchy_level": HierarchyLevel.CONTEXT,
        "memory_type": MemoryType.SEMANTIC,
        "created_date": at,
        "timestamp": at,
        "cognitive_embedding": vector,
        "tags": tags,
        "session_id": session,
    }
    return CognitiveMemory(**(fields | changes))


def test_tags_and_sessions_are_counted_with_first_and_last_times(store: SQLiteMemoryStore) -> None:
    store.memories.add(
        [
            memory(0, ("ops", "kafka"), "monday"),
            memory(1, ("ops",), "monday"),
            memory(5, ("ops", "db"), "tuesday"),
            memory(9, (), None),
        ]
    )

    found = store.memories.overview(VectorFilter(), None, 10)

    assert found.tags == [TagCount("ops", 3), TagCount("db", 1), TagCount("kafka", 1)]
    assert (found.more_tags, found.untagged) == (0, 1)
    first, last = (T0 + timedelta(minutes=n) for n in (0, 1))
    assert found.sessions == [
        SessionSpan(
            "tuesday", 1, (T0 + timedelta(minutes=5)).timestamp(), (T0 + timedelta(minutes=5)).timestamp()
        ),
        SessionSpan("monday", 2, first.timestamp(), last.timestamp()),
    ]
    assert (found.more_sessions, found.more_session_memories, found.without_session) == (0, 0, 1)


def test_an_overview_names_at_most_size_and_counts_the_rest(store: SQLiteMemoryStore) -> None:
    store.memories.add([memory(n, (f"tag{n % 7}", f"solo{n}"), f"s{n // 3}") for n in range(30)])

    found = store.memories.overview(VectorFilter(), None, 5)

    assert [t.tag for t in found.tags] == ["tag0", "tag1", "tag2", "tag3", "tag4"]
    assert found.more_tags == 2 + 30  # tag5, tag6 and the solo tags
    assert [s.session for s in found.sessions] == ["s9", "s8", "s7", "s6", "s5"]
    assert (found.more_sessions, found.more_session_memories) == (5, 15)


def test_the_overview_keeps_to_the_filter_and_reads_past_tags_no_command_writes(
    store: SQLiteMemoryStore, store_kind: str
) -> None:
    if store_kind == "postgres":
        pytest.skip("PostgreSQL refuses tags that do not parse as JSON (a CHECK): no such row exists there")
    store.memories.add(
        [memory(0, ("ops",), "a", project="web"), memory(1, ("db",), "b", project="api"), memory(2, ("x",))]
    )
    with closing(sqlite3.connect(store.path)) as conn, conn:
        conn.execute("UPDATE memories SET tags = 'not json' WHERE id = 'm00002'")

    web = store.memories.overview(VectorFilter(projects=("web",)), None, 10)
    every = store.memories.overview(VectorFilter(), None, 10)

    assert web.tags == [TagCount("ops", 1)] and [s.session for s in web.sessions] == ["a"]
    assert every.untagged == 1 and {t.tag for t in every.tags} == {"ops", "db"}


def _statements(store: SQLiteMemoryStore, where: VectorFilter) -> list[str]:
    statements: list[str] = []
    store.database.trace(statements.append)
    try:
        store.memories.overview(where, None, 25)
    finally:
        store.database.trace(None)
    return [s for s in statements if s.lstrip().upper().startswith("SELECT")]


def test_the_overview_is_two_statements_however_many_memories_tags_and_sessions(
    store: SQLiteMemoryStore,
) -> None:
    store.memories.add([memory(n, (f"t{n % 3}",), f"s{n % 2}") for n in range(10)])
    few = _statements(store, VectorFilter())
    store.memories.add([memory(n, (f"t{n}", "common"), f"s{n}") for n in range(10, 2_010)])

    many = _statements(store, VectorFilter())
    scoped = _statements(store, VectorFilter(projects=("default", "global"), tags=("common",)))

    assert len(few) == len(many) == len(scoped) == 2


def test_the_sessions_of_every_project_are_read_from_the_session_index_alone(
    store: SQLiteMemoryStore, store_kind: str
) -> None:
    if store_kind == "postgres":
        pytest.skip("SQLite's query plan: PostgreSQL's planner chooses by its statistics")
    condition, params = matching_sql(VectorFilter(), None, SQLITE)
    with closing(sqlite3.connect(store.path)) as conn:
        plan = conn.execute(f"EXPLAIN QUERY PLAN {_SESSIONS.format(condition=condition)}", [*params, 26])
        steps = [row[3] for row in plan]

    assert "SCAN memories USING COVERING INDEX memories_session" in steps
