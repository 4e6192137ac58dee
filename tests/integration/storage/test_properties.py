"""What the store records about itself: store_meta values and activity times."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cognitive_memory.storage import SQLiteMemoryStore
from tests.integration.storage.stored import stored_memory


def test_add_records_the_time_of_the_last_storage(store: SQLiteMemoryStore) -> None:
    before = datetime.now(UTC)
    store.memories.add([stored_memory("a")])

    assert before - timedelta(seconds=1) <= store.properties.activity()["last_storage"] <= datetime.now(UTC)


def test_meta_values_are_kept_and_overwritten(store: SQLiteMemoryStore) -> None:
    assert store.properties.get("encoder") is None

    store.properties.set("encoder", "hash-384:384")
    store.properties.set("encoder", "all-MiniLM-L6-v2:384")

    assert store.properties.get("encoder") == "all-MiniLM-L6-v2:384"
