"""What kind of change a write of a memory's row logs (migration 0023): 'uses' when it changed
nothing but the memory's uses (access count, last use: what a recall's bookkeeping writes), which
no point of the vector index holds; 'memory' when any other column changed. Every column of
``memories`` is tried, as the database lists them: a column added later and left out of the
trigger fails here."""

from __future__ import annotations

from datetime import timedelta

from cognitive_memory.core.memory import HierarchyLevel, MemoryType, SourceKind
from cognitive_memory.core.uses import Use
from cognitive_memory.storage.sql import column_names
from tests.integration.storage.conftest import Store
from tests.integration.storage.stored import STORED_AT, stored_memory

USES = {"access_count", "last_accessed"}
# Columns no write changes: the memory's identity, and PostgreSQL's stand-in for SQLite's rowid.
FIXED = {"id", "rowid"}


def _kinds_of(store: Store, write: str, params: tuple[object, ...] = ()) -> list[str]:
    """The kinds the write logs, read inside its transaction, which is then rolled back."""

    class Undone(Exception):
        kinds: list[str]

    try:
        with store.database.transaction() as conn:
            head = conn.execute("SELECT coalesce(max(seq), 0) FROM change_log").fetchone()[0]
            conn.execute(write, params)
            found = Undone()
            found.kinds = [k for (k,) in conn.execute("SELECT kind FROM change_log WHERE seq > ?", (head,))]
            raise found
    except Undone as undone:
        return undone.kinds


def _other(store: Store) -> None:
    """Add memory 'a', and 'b' differing from it in every column but the fixed ones."""
    store.memories.add([stored_memory("a", project="alpha", key="first")])
    later = STORED_AT + timedelta(days=3)
    other = stored_memory(
        "b",
        content="another text",
        hierarchy_level=HierarchyLevel.EPISODE,
        memory_type=MemoryType.EPISODIC,
        created_date=later,
        timestamp=later,
        modified_date=later,
        source_date=later,
        importance_score=0.9,
        metadata={"topic": "other"},
        tags=("other",),
        session_id="s-2",
        project="beta",
        source=SourceKind.MARKDOWN,
        speaker="Caroline",
        origin="notes/b.md",
        key="second",
    )
    store.memories.add([other])
    store.memories.record_uses([Use(("b",), (), later, 0.0)])
    with store.database.transaction() as conn:  # what no repository call sets apart
        conn.execute("UPDATE memories SET strength = 0.123, dimensions = '{\"b\": 1}' WHERE id = 'b'")


def test_a_write_of_any_column_but_the_uses_logs_memory_and_of_the_uses_alone_logs_uses(
    store: Store,
) -> None:
    _other(store)
    columns = store.database.read(lambda conn: column_names(conn.execute("SELECT * FROM memories LIMIT 0")))
    every = store.database.read(lambda conn: conn.execute("SELECT * FROM memories").fetchall())
    rows = {row[0]: row for row in every}
    same = [c for i, c in enumerate(columns) if c not in FIXED and rows["a"][i] == rows["b"][i]]
    assert not same, f"'b' must differ from 'a' in every column the test writes: {same}"

    for column in sorted(set(columns) - FIXED):
        taken = f"(SELECT {column} FROM memories WHERE id = 'b')"
        write = f"UPDATE memories SET {column} = {taken} WHERE id = 'a'"
        assert _kinds_of(store, write) == ["uses" if column in USES else "memory"], column

    both = "UPDATE memories SET access_count = access_count + 1, last_accessed = ? WHERE id = 'a'"
    assert _kinds_of(store, both, (1.0,)) == ["uses"]
    with_importance = "UPDATE memories SET access_count = 7, importance_score = 0.2 WHERE id = 'a'"
    assert _kinds_of(store, with_importance) == ["memory"]
    assert _kinds_of(store, "UPDATE memories SET content = content WHERE id = 'a'") == ["uses"]


def test_a_memory_added_or_removed_logs_memory(store: Store) -> None:
    head = store.changes.head()
    store.memories.add([stored_memory("a")])
    assert ("a", "memory") in {(c.memory_id, c.kind) for c in store.changes.since(head).changes}
    assert _kinds_of(store, "DELETE FROM memories WHERE id = 'a'")[:1] == ["memory"]


def test_a_recall_s_uses_log_uses(store: Store) -> None:
    store.memories.add([stored_memory("a"), stored_memory("b")])
    head = store.changes.head()

    store.memories.record_uses([Use(("a", "b"), (), STORED_AT + timedelta(hours=1), 0.0)])

    logged = {(c.memory_id, c.kind) for c in store.changes.since(head).changes}
    assert logged == {("a", "uses"), ("b", "uses")}
