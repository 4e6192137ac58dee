"""The links repository: co-recall links, strengthened and capped."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from cognitive_memory.core.uses import Use
from cognitive_memory.storage import SQLiteMemoryStore
from tests.integration.storage.stored import STORED_AT, stored_memory


def test_each_memory_keeps_only_its_most_recently_strengthened_co_recall_links(
    store: SQLiteMemoryStore,
) -> None:
    ids = [f"m{n}" for n in range(8)]
    store.memories.add([stored_memory(memory_id) for memory_id in ids])
    for other in ids[1:]:
        store.links.strengthen([("m0", other)], 0.1, keep=3)
    store.links.strengthen([("m1", "m2")], 0.1, keep=3)

    graph = store.links.neighbours(ids)

    assert sorted(target for target, _ in graph["m0"]) == ["m5", "m6", "m7"]
    # A dropped link goes in both directions; m1 keeps its link to m2, made later.
    assert [target for target, _ in graph["m1"]] == ["m2"]
    assert all(("m0", 0.1) in graph[kept] for kept in ("m5", "m6", "m7"))
    assert "m0" not in dict(graph.get("m4", []))


def test_recording_an_access_strengthens_the_links_of_memories_recalled_together(
    store: SQLiteMemoryStore,
) -> None:
    store.memories.add([stored_memory("a"), stored_memory("b"), stored_memory("c")])

    use = Use(("a", "b"), ("a", "b"), STORED_AT, STORED_AT.timestamp())
    store.memories.record_uses([use])
    store.memories.record_uses([use])

    graph = store.links.neighbours(["a", "b", "c"])
    assert graph["a"] == [("b", pytest.approx(0.2))] and graph["b"] == [("a", pytest.approx(0.2))]
    assert "c" not in graph


def test_the_neighbourhood_keeps_each_pairs_strongest_link_with_and_without_time(
    store: SQLiteMemoryStore,
) -> None:
    store.memories.add([stored_memory(memory_id) for memory_id in ("a", "b", "c", "d", "e")])
    store.links.connect([("a", "b", 1.0), ("a", "c", 0.5)], "temporal")
    store.links.connect([("a", "c", 0.3), ("a", "e", 0.2)], "semantic")
    store.links.strengthen([("a", "c")], 0.1)
    store.links.link(("d", "a", "relates_to"), None, None)  # a user link counts 0.8 both ways
    store.links.link(("a", "d", "example_of"), None, None)

    graph, timeless = store.links.neighbourhood(["a", "b", "d"])

    # Neighbours in the order of their ids; a pair linked only in time is not timeless.
    assert graph["a"] == [("b", 1.0), ("c", 0.5), ("d", 0.8), ("e", pytest.approx(0.2))]
    assert timeless["a"] == [("c", 0.3), ("d", 0.8), ("e", pytest.approx(0.2))]
    assert graph["b"] == [("a", 1.0)] and "b" not in timeless
    assert graph["d"] == timeless["d"] == [("a", 0.8)]
    assert "c" not in graph  # only the ids asked for


def test_uses_written_together_count_as_written_one_by_one(
    store: SQLiteMemoryStore, open_store: Callable[[str], SQLiteMemoryStore]
) -> None:
    ids = [f"m{n}" for n in range(6)]
    uses = [
        Use(tuple(ids[:4]), tuple(ids[:4]), STORED_AT, 100.0),
        Use(("m2",), (), STORED_AT + timedelta(hours=1), 150.0),
        Use(tuple(ids[2:]), tuple(ids[2:]), STORED_AT + timedelta(hours=2), 200.0),
    ]
    alone = open_store("alone")
    for each in (store, alone):
        each.memories.add([stored_memory(memory_id) for memory_id in ids])
    store.memories.record_uses(uses)
    for one in uses:
        alone.memories.record_uses([one])

    def state(each: SQLiteMemoryStore) -> tuple[object, ...]:
        return (
            each.database.rows("SELECT id, access_count, last_accessed FROM memories ORDER BY id"),
            each.database.rows("SELECT * FROM connections ORDER BY source_id, target_id, kind"),
            each.properties.activity()["last_retrieval"],
        )

    assert state(store) == state(alone)
    assert dict(store.links.neighbours(ids)["m2"])["m3"] == pytest.approx(0.2)  # recalled together twice
