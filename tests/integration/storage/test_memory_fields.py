"""Migration 0020's ``memory_fields``: the caller's own fields of each memory that filters.metadata
matches, filled from the memories an older store holds and kept in step by triggers on every
write (add, rewrite, delete), beside the change log's."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from cognitive_memory.core.memory import SourceKind
from cognitive_memory.index.vector_store import VectorFilter
from cognitive_memory.storage import SQLiteMemoryStore
from tests.integration.storage.stored import stored_memory, table_rows

FIELDS = "SELECT memory_id, name, kind, value FROM memory_fields ORDER BY memory_id, name"


def add_varied(store: SQLiteMemoryStore) -> None:
    store.memories.add(
        [
            stored_memory(
                "by-hand",
                metadata={"source_info": "standup", "phase": "beta", "n": 2.5, "ok": True, "no": False,
                          "list": [1], "object": {"a": 1}, "nothing": None},
            ),
            stored_memory(
                "lesson",
                source=SourceKind.SESSION_LESSON,
                metadata={"lesson_type": "warning", "session_id": "s", "ticket": 7},
            ),
            stored_memory("loaded", source=SourceKind.MARKDOWN, metadata={"section": "Intro", "title": "x"}),
        ]
    )  # fmt: skip


EXPECTED = [
    ("by-hand", "n", "number", 2.5),
    ("by-hand", "no", "bool", 0),
    ("by-hand", "ok", "bool", 1),
    ("by-hand", "phase", "text", "beta"),
    ("lesson", "ticket", "number", 7),
]


def test_each_write_keeps_the_fields_in_step_without_reserved_keys_or_loaded_memories(
    store: SQLiteMemoryStore, store_kind: str
) -> None:
    # Metadata that is no object: SQLite takes any text; PostgreSQL refuses what does not parse.
    no_object = "not json" if store_kind == "sqlite" else '"a string"'
    add_varied(store)
    added = store.database.rows(FIELDS)
    with store.database.transaction() as conn:
        conn.execute("UPDATE memories SET metadata = '{\"phase\": \"ga\"}' WHERE id = 'by-hand'")
        conn.execute("UPDATE memories SET metadata = ? WHERE id = 'lesson'", (no_object,))
    changed = store.database.rows(FIELDS)
    store.memories.delete(["by-hand"])

    assert added == EXPECTED
    assert changed == [("by-hand", "phase", "text", "ga")]
    assert store.database.rows(FIELDS) == []


def test_a_store_made_before_0020_gets_the_fields_of_the_memories_it_holds(db_path: Path) -> None:
    store = SQLiteMemoryStore(db_path)
    add_varied(store)
    store.close()
    with closing(sqlite3.connect(db_path)) as conn, conn:
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'memory_fields%' "
                                    "AND type = 'trigger'").fetchall():  # fmt: skip
            conn.execute(f"DROP TRIGGER {name}")
        conn.execute("DROP TABLE memory_fields")
        conn.execute("DELETE FROM schema_migrations WHERE name = '0020_metadata_fields'")

    SQLiteMemoryStore(db_path).close()

    assert table_rows(db_path, FIELDS) == EXPECTED


def test_the_fields_add_no_change_of_their_own_to_the_change_log(store: SQLiteMemoryStore) -> None:
    add_varied(store)
    with store.database.transaction() as conn:
        before = conn.execute("SELECT COUNT(*) FROM change_log").fetchone()[0]
        conn.execute("UPDATE memories SET metadata = '{\"phase\": \"ga\"}' WHERE id = 'by-hand'")
        after = conn.execute("SELECT memory_id, kind FROM change_log WHERE seq > ?", (before,)).fetchall()

    assert after == [("by-hand", "memory")]


def test_a_filter_on_the_caller_fields_matches_each_kind_exactly(store: SQLiteMemoryStore) -> None:
    store.memories.add(
        [
            stored_memory("a", metadata={"team": "core", "n": 3, "ok": True, "share": 2.5}),
            stored_memory("b", metadata={"team": "web", "n": 3.0, "ok": False}),
        ]
    )

    def matching(*fields: tuple[str, str, object]) -> list[str]:
        page = store.memories.browse(VectorFilter(metadata=fields), "created", 10)
        return sorted(memory.id for memory in page.memories)

    assert matching(("team", "text", "core")) == ["a"]
    assert matching(("n", "number", 3)) == ["a", "b"]
    assert matching(("n", "number", 3.0), ("ok", "bool", 0)) == ["b"]
    assert matching(("share", "number", 2.5)) == ["a"]
    assert matching(("team", "text", "3"), ("n", "number", 4)) == []
