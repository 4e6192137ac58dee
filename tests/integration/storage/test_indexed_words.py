"""Whether the index holds every memory's words (storage/indexed_words.py): a new store is marked
from its first migration, a store made before migration 0017 is not; the watermark never goes
back, and the marker set by another process is seen."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from cognitive_memory.storage import SQLiteMemoryStore
from cognitive_memory.storage.indexed_words import WORDS_COMPLETE, IndexedWords
from tests.integration.storage.stored import stored_memory


def _made_before_0017(db_path: Path, count: int) -> None:
    """A store with ``count`` memories, as a release before migration 0017 left it."""
    old = SQLiteMemoryStore(db_path)
    old.memories.add([stored_memory(f"m{i}", content=f"memory number {i}") for i in range(count)])
    old.close()
    with closing(sqlite3.connect(db_path)) as conn, conn:
        conn.execute("DELETE FROM store_meta WHERE key = ?", (WORDS_COMPLETE,))
        conn.execute("DELETE FROM schema_migrations WHERE name = '0017_words_indexed'")


def test_a_new_store_holds_every_memorys_words_from_the_start(store: SQLiteMemoryStore) -> None:
    store.memories.add([stored_memory("a", content="a first memory")])

    assert store.indexed_words.complete()
    assert store.indexed_words.progress() is None
    assert store.words.in_index()


def test_a_store_made_before_the_migration_has_its_words_to_build(db_path: Path) -> None:
    _made_before_0017(db_path, 3)

    store = SQLiteMemoryStore(db_path)
    try:
        assert not store.indexed_words.complete()
        assert store.indexed_words.progress() == (0, 3)
        assert [memory_id for _, memory_id in store.indexed_words.next_batch(2)] == ["m0", "m1"]
    finally:
        store.close()


def test_the_watermark_moves_forward_only_and_the_marker_ends_the_batches(db_path: Path) -> None:
    _made_before_0017(db_path, 3)
    store = SQLiteMemoryStore(db_path)
    try:
        indexed = store.indexed_words
        second = indexed.next_batch(2)[-1][0]
        indexed.advance(second)
        indexed.advance(second - 1)  # another builder, behind this one
        after = [memory_id for _, memory_id in indexed.next_batch(5)]
        progress = indexed.progress()
        indexed.mark_complete()

        assert (after, progress) == (["m2"], (2, 3))
        assert (indexed.next_batch(5), indexed.progress(), indexed.complete()) == ([], None, True)
    finally:
        store.close()


def test_the_marker_set_by_another_process_is_seen_at_the_next_look(db_path: Path) -> None:
    _made_before_0017(db_path, 1)
    store = SQLiteMemoryStore(db_path)
    other = SQLiteMemoryStore(db_path)
    try:
        watching = IndexedWords(store.database, recheck_seconds=0.0)
        before = watching.complete()
        other.indexed_words.mark_complete()

        assert (before, watching.complete()) == (False, True)
    finally:
        other.close()
        store.close()
