"""Keys and dry runs of store_memory through the SDK's in-memory client: a key names one memory of
its project, storing under it again updates that memory (the old state kept as a version), a key
reads it back, and a dry run answers what a store would do without writing anything."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client
from mcp.types import TextContent

from cognitive_memory.system import CognitiveSystem
from tests.mcp.tools import call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL


async def store(client: Client, text: str, **context: Any) -> dict[str, Any]:
    return await call(
        client, "store_memory", {"text": text, "context": context} if context else {"text": text}
    )


async def refusal(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    (block,) = result.content
    assert isinstance(block, TextContent)
    body: dict[str, Any] = json.loads(block.text)
    return body


async def test_storing_under_a_held_key_updates_that_memory_and_keeps_the_old_text(
    client: Client, hash_system: CognitiveSystem
) -> None:
    first = await store(client, "Indent with tabs.", key="coding-style", tags=["style"])
    second = await store(client, "Indent with four spaces, never tabs.", key="Coding-Style")

    assert first["key"] == second["key"] == "coding-style"
    assert second["memory_id"] == first["memory_id"] and second["updated"] is True
    assert "version 1" in second["message"] and "updated" not in first
    assert hash_system.records.memories.counts().total == 1
    body = await call(client, "get_memories", {"keys": ["CODING-STYLE"], "include_history": True})
    (record,) = body["memories"]
    assert (record["id"], record["key"], record["content"]) == (
        first["memory_id"],
        "coding-style",
        "Indent with four spaces, never tabs.",
    )
    assert record["tags"] == ["style"]  # what the second store did not give stays
    assert [version["content"] for version in record["history"]] == ["Indent with tabs."]


async def test_the_same_text_under_its_key_is_a_duplicate_and_writes_no_version(
    client: Client, hash_system: CognitiveSystem
) -> None:
    first = await store(client, "Deploys run on Fridays.", key="deploy-day")
    again = await store(client, "Deploys run on Fridays.", key="deploy-day")

    assert (again["memory_id"], again["duplicate"], again.get("updated")) == (first["memory_id"], True, None)
    assert hash_system.records.history.of([first["memory_id"]]) == {}


async def test_a_text_stored_without_a_key_takes_the_key_it_is_stored_again_under(client: Client) -> None:
    plain = await store(client, "The cache key holds the branch name.")
    keyed = await store(client, "The cache key holds the branch name.", key="cache-key")

    assert (keyed["memory_id"], keyed["duplicate"], keyed["key"]) == (plain["memory_id"], True, "cache-key")
    (record,) = (await call(client, "get_memories", {"keys": ["cache-key"]}))["memories"]
    assert record["id"] == plain["memory_id"]


async def test_a_key_is_unique_per_project_and_read_in_the_project_before_global(client: Client) -> None:
    web = await store(client, "Web: deploy with the blue-green script.", key="deploy", project="web")
    api = await store(client, "API: deploy with helm.", key="deploy", project="api")
    shared = await store(client, "Everyone: deploy only after review.", key="deploy", project="global")

    assert len({web["memory_id"], api["memory_id"], shared["memory_id"]}) == 3
    read = await call(client, "get_memories", {"keys": ["deploy"], "project": "api"})
    assert [m["id"] for m in read["memories"]] == [api["memory_id"]]
    elsewhere = await call(client, "get_memories", {"keys": ["deploy"], "project": "docs"})
    assert [m["id"] for m in elsewhere["memories"]] == [shared["memory_id"]]


async def test_an_unknown_key_is_missing_and_a_key_with_spaces_is_refused(client: Client) -> None:
    stored = await store(client, "Tabs are banned.", key="style")

    body = await call(client, "get_memories", {"memory_ids": [stored["memory_id"]], "keys": ["no-such-key"]})
    assert [m["id"] for m in body["memories"]] == [stored["memory_id"]]
    assert body["missing"] == ["no-such-key"]
    refused = await refusal(client, "store_memory", {"text": "x y", "context": {"key": "coding style"}})
    assert refused["error"] == "invalid_value" and "a key is 1-100 letters" in refused["message"]
    assert (await refusal(client, "get_memories", {}))["error"] == "missing_field"


async def test_forgetting_frees_the_key_and_restoring_the_old_memory_leaves_it_with_the_new_one(
    client: Client,
) -> None:
    old = await store(client, "Release on Tuesdays.", key="release-day")
    await call(client, "forget_memories", {"memory_ids": [old["memory_id"]]})
    new = await store(client, "Release on Thursdays.", key="release-day")
    assert new["memory_id"] != old["memory_id"] and "updated" not in new

    restored = (await call(client, "restore_memories", {"memory_ids": [old["memory_id"]]}))["restore"]

    assert restored["restored"] == [old["memory_id"]] and restored["unkeyed"] == [old["memory_id"]]
    (holder,) = (await call(client, "get_memories", {"keys": ["release-day"]}))["memories"]
    assert holder["id"] == new["memory_id"]
    (back,) = (await call(client, "get_memories", {"memory_ids": [old["memory_id"]]}))["memories"]
    assert back["content"] == "Release on Tuesdays." and "key" not in back


async def test_a_dry_run_writes_nothing_anywhere(client: Client, hash_system: CognitiveSystem) -> None:
    kept = await store(client, "The staging database password rotates monthly.")
    hash_system.flush()
    before = (hash_system.records.memories.counts().total, hash_system.vectors.ids())

    body = await call(
        client,
        "store_memory",
        {"text": "The staging database password rotates weekly.", "dry_run": True, "context": {"key": "pw"}},
    )

    assert body["dry_run"] is True and "memory_id" not in body
    assert (body["duplicate"], body["queued"], body["key"]) == (False, False, "pw")
    assert 0.0 <= body["novelty"] < 1.0 and body["hierarchy_level"] in (0, 1, 2)
    assert body["message"].startswith("Dry run, nothing stored: it would be stored as a new memory")
    hash_system.flush()
    assert (hash_system.records.memories.counts().total, hash_system.vectors.ids()) == before
    assert hash_system.records.outbox.pending() == []
    assert hash_system.records.history.of([kept["memory_id"]]) == {}
    assert (await call(client, "get_memories", {"keys": ["pw"]}))["missing"] == ["pw"]


async def test_a_dry_run_under_a_held_key_names_the_memory_it_would_update(
    client: Client, hash_system: CognitiveSystem
) -> None:
    held = await store(client, "Lint with flake8.", key="linter")
    duplicate = await call(client, "store_memory", {"text": "Lint with flake8.", "dry_run": True})

    body = await call(
        client, "store_memory", {"text": "Lint with ruff.", "dry_run": True, "context": {"key": "linter"}}
    )

    assert (body["memory_id"], body["updated"], body["dry_run"]) == (held["memory_id"], True, True)
    assert held["memory_id"] in body["message"] and "would update" in body["message"]
    assert (duplicate["memory_id"], duplicate["duplicate"]) == (held["memory_id"], True)
    assert hash_system.records.history.of([held["memory_id"]]) == {}
    (record,) = (await call(client, "get_memories", {"keys": ["linter"]}))["memories"]
    assert record["content"] == "Lint with flake8."


async def test_update_memory_gives_renames_and_removes_a_key_without_a_version(client: Client) -> None:
    plain = await store(client, "Lint with ruff before every commit.")
    held = await store(client, "Format with ruff format.", key="formatting")

    given = await call(client, "update_memory", {"memory_id": plain["memory_id"], "key": "Linting"})
    by_key = await call(client, "get_memories", {"keys": ["linting"], "include_history": True})
    taken = await refusal(client, "update_memory", {"memory_id": plain["memory_id"], "key": "formatting"})
    bad = await refusal(client, "update_memory", {"memory_id": plain["memory_id"], "key": "two words"})
    both = await call(
        client, "update_memory", {"memory_id": plain["memory_id"], "key": "lint", "importance_score": 0.9}
    )
    removed = await call(client, "update_memory", {"memory_id": held["memory_id"], "key": ""})
    freed = await call(client, "update_memory", {"memory_id": plain["memory_id"], "key": "formatting"})

    assert (given["changed"], given["memory"]["key"], "version" in given) == (["key"], "linting", False)
    (record,) = by_key["memories"]
    assert record["id"] == plain["memory_id"] and record.get("history", []) == []
    assert taken["error"] == "duplicate" and held["memory_id"] in taken["message"]
    assert bad["error"] == "invalid_value" and "'' to remove it" in bad["message"]
    assert both["changed"] == ["importance_score", "key"] and both["version"] == 1
    assert removed["changed"] == ["key"] and "key" not in removed["memory"]
    assert freed["memory"]["key"] == "formatting"


@pytest.mark.parametrize(
    ("stored", "typed"),
    [
        pytest.param("café", "cafe\u0301", id="composed-then-decomposed"),
        pytest.param("cafe\u0301", "CAFÉ", id="decomposed-then-upper-case"),
        pytest.param("ｃoding", "coding", id="fullwidth-then-ascii"),
        pytest.param("Straße", "STRASSE", id="sharp-s-then-ss"),
    ],
)
async def test_a_key_typed_composed_decomposed_or_fullwidth_names_one_memory(
    client: Client, hash_system: CognitiveSystem, stored: str, typed: str
) -> None:
    first = await store(client, "Decisions are written down the day they are made.", key=stored)
    second = await store(client, "Decisions are written down within the hour.", key=typed)

    assert second["memory_id"] == first["memory_id"] and second["updated"] is True
    assert hash_system.records.memories.counts().total == 1
    (record,) = (await call(client, "get_memories", {"keys": [typed]}))["memories"]
    assert record["id"] == first["memory_id"]


async def test_a_key_that_folding_gives_an_accent_is_taken(client: Client) -> None:
    stored = await store(client, "The Istanbul office opens at nine.", key="İstanbul")
    (record,) = (await call(client, "get_memories", {"keys": ["İSTANBUL"]}))["memories"]
    assert record["id"] == stored["memory_id"]
    assert stored["key"] == "i\u0307stanbul"
