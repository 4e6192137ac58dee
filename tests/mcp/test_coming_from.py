"""The tables of docs/tools.md "Coming from another memory server", row by row, through the SDK's
in-memory client: what a user of the official memory server, Memento, a neural memory with
checkpoints, a memory of categories and sessions, or a bootstrap memory of keyed entries did there
works here under the name the table gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.mcp.tools import call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL


async def stored(client: Client, text: str, **context: Any) -> str:
    body = await call(client, "store_memory", {"text": text, "context": context})
    return str(body["memory_id"])


async def recalled(client: Client, query: str, **arguments: Any) -> list[str]:
    body = await call(client, "recall_memories", {"query": query, "detail": "full", **arguments})
    return [memory["content"] for section in body["memories"].values() for memory in section]


async def test_official_memory_entities_observations_and_relations(client: Client) -> None:
    # create_entities: one memory per entity, keyed by its name
    john = await stored(
        client, "John_Smith (person)\n- Speaks Spanish", key="John_Smith", tags=["entity:person"]
    )
    acme = await stored(
        client, "Acme (organization)\n- Makes anvils", key="Acme", tags=["entity:organization"]
    )
    # add_observations: the same key again, the text grown; the old text is kept as a version
    grown = await call(
        client,
        "store_memory",
        {
            "text": "John_Smith (person)\n- Speaks Spanish\n- Lives in Madrid",
            "context": {"key": "John_Smith"},
        },
    )
    # create_relations: their relationType kept as a relation of your own
    linked = await call(client, "link_memories", {"from_id": john, "to_id": acme, "relation": "works_at"})
    # open_nodes, read_graph, search_nodes
    (opened,) = (await call(client, "get_memories", {"keys": ["john_smith"], "include_history": True}))[
        "memories"
    ]
    related = (await call(client, "related_memories", {"memory_id": john}))["related"]
    found = await recalled(client, "who lives in Madrid")
    # delete_relations, delete_entities
    unlinked = await call(client, "unlink_memories", {"from_id": john, "to_id": acme})
    forgotten = await call(client, "forget_memories", {"keys": ["acme"]})

    assert (grown["memory_id"], grown["updated"]) == (john, True)
    assert (linked["created"], linked["relation"]) == (True, "works_at")
    assert opened["content"].endswith("Lives in Madrid") and len(opened["history"]) == 1
    assert [(r["id"], r["relation"]) for r in related] == [(acme, "works_at")]
    assert found[0].startswith("John_Smith")
    assert unlinked["removed"] == ["works_at"]
    assert forgotten["forgotten"] == [acme]


async def test_memento_metadata_weights_history_and_explain(client: Client) -> None:
    first = await stored(
        client, "Redis caches the session tokens.", metadata={"confidence": 0.9, "team": "auth"}
    )
    second = await stored(client, "Sessions expire after thirty minutes.", metadata={"team": "auth"})
    other = await stored(client, "The office plants need water on Mondays.", metadata={"team": "facilities"})
    # a relation's strength is the link's weight
    linked = await call(
        client, "link_memories", {"from_id": first, "to_id": second, "relation": "depends_on", "weight": 0.3}
    )
    # semantic_search with a metadata filter
    found = await recalled(client, "session tokens", filters={"metadata": {"team": "auth"}})
    # get_entity_history
    await call(
        client, "update_memory", {"memory_id": first, "text": "Redis caches the session tokens for an hour."}
    )
    (record,) = (await call(client, "get_memories", {"memory_ids": [first], "include_history": True}))[
        "memories"
    ]
    # why a memory was not found
    explained = await call(client, "recall_memories", {"query": "session tokens", "explain": [other]})

    assert linked["weight"] == 0.3
    assert "The office plants need water on Mondays." not in found
    assert found[0] == "Redis caches the session tokens."
    assert record["metadata"] == {"confidence": 0.9, "team": "auth"}
    assert [version["content"] for version in record["history"]] == ["Redis caches the session tokens."]
    (why,) = explained["explained"]
    assert why["id"] == other and why["reason"] != "returned"


@pytest.mark.stores(
    "sqlite", reason="a PostgreSQL store's snapshot is restored by move-store, not restore (docs/team.md)"
)
async def test_neural_memory_checkpoints_are_snapshots(client: Client, tmp_path: Path) -> None:
    await stored(client, "The staging cluster runs Kubernetes 1.31.")
    made = await call(client, "snapshot_memories", {"name": "before-upgrade"})
    listed = await call(client, "snapshot_memories", {"list": True})

    assert made["snapshot"]["name"] == "before-upgrade"
    assert made["snapshot"]["counts"]["memories"] == 1
    assert "memory_system restore" in made["snapshot"]["restore"]
    assert [snapshot["name"] for snapshot in listed["snapshots"]] == ["before-upgrade"]


async def test_categories_and_sessions_are_tags_and_sessions(client: Client) -> None:
    await stored(client, "We chose Postgres over MySQL for JSONB.", tags=["decision"], session="planning")
    await stored(client, "The build breaks when the cache is cold.", tags=["bug"], session="planning")
    await stored(client, "Retries use exponential backoff.", tags=["decision"], session="review")
    # the categories in use and their counts, the sessions with theirs
    overview = (await call(client, "list_memories", {"overview": True}))["overview"]
    # one category, one session
    decisions = await call(client, "list_memories", {"filters": {"tags": ["decision"]}})
    planning = await call(client, "list_memories", {"filters": {"session": "planning"}})
    found = await recalled(client, "Postgres JSONB", filters={"tags": ["decision"]})

    assert overview["tags"] == [{"tag": "decision", "memories": 2}, {"tag": "bug", "memories": 1}]
    assert sorted((s["session"], s["memories"]) for s in overview["sessions"]) == [
        ("planning", 2),
        ("review", 1),
    ]
    assert decisions["total"] == 2 and planning["total"] == 2
    assert found == ["We chose Postgres over MySQL for JSONB."]


async def test_bootstrap_keyed_entries_by_category(client: Client) -> None:
    # set(key, value, category) twice: the second replaces the first
    first = await call(
        client,
        "store_memory",
        {
            "text": "Use 4 spaces.",
            "context": {"key": "coding-style", "tags": ["preferences"], "project": "web"},
        },
    )
    second = await call(
        client,
        "store_memory",
        {"text": "Use 2 spaces in TypeScript.", "context": {"key": "coding-style", "project": "web"}},
    )
    got = await call(client, "get_memories", {"keys": ["coding-style"], "project": "web"})
    listed = await call(client, "list_memories", {"filters": {"tags": ["preferences"], "projects": ["web"]}})
    # search: by the key itself, or by one of its words
    by_key = await recalled(client, "Coding-Style", filters={"projects": ["web"]})
    by_word = await recalled(client, "style", filters={"projects": ["web"]})
    forgotten = await call(client, "forget_memories", {"keys": ["coding-style"], "project": "web"})
    # undo from a server whose own project is another one
    trash = await call(client, "restore_memories", {"project": "*"})
    restored = await call(client, "restore_memories", {"memory_ids": [first["memory_id"]]})

    assert second["memory_id"] == first["memory_id"] and second["updated"] is True
    assert [m["content"] for m in got["memories"]] == ["Use 2 spaces in TypeScript."]
    assert [m["tags"] for m in listed["memories"]] == [["preferences"]]
    assert by_key[:1] == by_word[:1] == ["Use 2 spaces in TypeScript."]
    assert forgotten["forgotten"] == [first["memory_id"]]
    assert [entry["id"] for entry in trash["trash"]] == [first["memory_id"]]
    assert restored["restore"]["restored"] == [first["memory_id"]]
