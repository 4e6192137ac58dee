"""The vector outbox: one row per write, cleared by id."""

from __future__ import annotations

from cognitive_memory.storage import SQLiteMemoryStore
from tests.integration.storage.stored import stored_memory


def test_add_queues_one_outbox_row_per_memory(store: SQLiteMemoryStore) -> None:
    store.memories.add([stored_memory("a"), stored_memory("b")])
    store.memories.add([stored_memory("c")])

    assert sorted(store.outbox.pending()) == [("a", "upsert"), ("b", "upsert"), ("c", "upsert")]


def test_clear_outbox_removes_only_the_given_ids(store: SQLiteMemoryStore) -> None:
    store.memories.add([stored_memory("a"), stored_memory("b"), stored_memory("c")])

    store.outbox.clear(["a", "c"])

    assert store.outbox.pending() == [("b", "upsert")]


def test_a_memory_queued_again_moves_to_the_end_of_the_queue(store: SQLiteMemoryStore) -> None:
    store.memories.add([stored_memory("a"), stored_memory("b"), stored_memory("c")])
    store.outbox.clear(["a", "b", "c"])

    store.memories.add([stored_memory("d")])
    store.memories.add([stored_memory("e")])
    store.memories.delete(["d"])  # queued again, as a deletion

    assert store.outbox.pending() == [("e", "upsert"), ("d", "delete")]
