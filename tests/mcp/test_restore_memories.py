"""restore_memories through the SDK's in-memory client: without ids the project's trash, newest
first and brief; with ids the memories come back whole, in recall and by id."""

from __future__ import annotations

import json

import pytest
from mcp import Client
from mcp.types import TextContent

from cognitive_memory.system import CognitiveSystem
from tests.mcp.tools import call

pytestmark = pytest.mark.anyio


async def test_the_trash_is_listed_newest_first_then_restored_by_id(
    client: Client, hash_system: CognitiveSystem
) -> None:
    empty = await call(client, "restore_memories", {})
    assert (empty["trash"], empty["message"]) == ([], "The trash is empty")
    first = await call(client, "store_memory", {"text": "The deploy runs on Fridays at noon."})
    second = await call(client, "store_memory", {"text": "Rotate the API token every month."})
    other = await call(
        client, "store_memory", {"text": "Web only: purge the CDN.", "context": {"project": "web"}}
    )
    for stored in (first, second, other):
        await call(client, "forget_memories", {"memory_ids": [stored["memory_id"]]})

    listed = await call(client, "restore_memories", {})

    assert [entry["id"] for entry in listed["trash"]] == [second["memory_id"], first["memory_id"]]
    assert set(listed["trash"][0]) == {"id", "preview", "trashed_at", "reason"}
    assert listed["trash"][0]["reason"] == "forgotten" and "restore" not in listed
    body = await call(client, "restore_memories", {"memory_ids": [first["memory_id"], "no-such-memory"]})
    assert (body["restore"]["restored"], body["restore"]["missing"]) == (
        [first["memory_id"]],
        ["no-such-memory"],
    )
    assert "trash" not in body
    (back,) = (await call(client, "get_memories", {"memory_ids": [first["memory_id"]]}))["memories"]
    assert back["content"] == "The deploy runs on Fridays at noon."
    recalled = await call(client, "recall_memories", {"query": "deploy Fridays noon", "detail": "full"})
    assert first["memory_id"] in [
        m["id"] for m in recalled["memories"]["core"] + recalled["memories"]["peripheral"]
    ]
    assert [entry["id"] for entry in (await call(client, "restore_memories", {}))["trash"]] == [
        second["memory_id"]
    ]


async def test_it_restores_without_destroying_and_refuses_unknown_arguments(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    annotations = tools["restore_memories"].annotations
    assert annotations is not None and annotations.destructive_hint is False
    assert "restore_memories" in (tools["forget_memories"].description or "")

    result = await client.call_tool("restore_memories", {"ids": ["abc"]})

    assert result.is_error
    (block,) = result.content
    assert isinstance(block, TextContent)
    body = json.loads(block.text)
    assert body["error"] == "unknown_field" and "`ids`: unknown argument" in body["message"]
    assert "restore_memories takes memory_ids" in body["message"]
