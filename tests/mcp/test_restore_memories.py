"""restore_memories through the SDK's in-memory client: without ids the project's trash (or every
project's), newest first and brief; with ids the memories come back whole, in recall and by id."""

from __future__ import annotations

import json

import pytest
from mcp import Client
from mcp.types import TextContent

from cognitive_memory.system import CognitiveSystem
from tests.mcp.tools import call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL


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
    assert set(listed["trash"][0]) == {"id", "preview", "project", "trashed_at", "reason"}
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


async def test_the_trash_of_other_projects_is_counted_listed_with_star_and_restored_by_id(
    client: Client,
) -> None:
    stored = await call(
        client, "store_memory", {"text": "Lint with ruff.", "context": {"project": "programming"}}
    )
    await call(client, "forget_memories", {"memory_ids": [stored["memory_id"]]})

    here = await call(client, "restore_memories", {})
    everywhere = await call(client, "restore_memories", {"project": "*"})
    there = await call(client, "restore_memories", {"project": "programming"})

    assert here["trash"] == []
    assert here["message"] == (
        "Nothing in the trash of project 'default' and global; 1 in other projects (project '*' lists them)"
    )
    for listing in (everywhere, there):
        (entry,) = listing["trash"]
        assert (entry["id"], entry["project"]) == (stored["memory_id"], "programming")
    assert everywhere["message"] == "1 entry in the trash of every project"
    assert there["message"] == "1 entry in the trash of project 'programming' and global"
    back = await call(client, "restore_memories", {"memory_ids": [stored["memory_id"]]})
    assert back["restore"]["restored"] == [stored["memory_id"]]
    assert (await call(client, "restore_memories", {"project": "*"}))["message"] == "The trash is empty"


async def test_a_listing_of_the_project_says_how_many_more_other_projects_hold(client: Client) -> None:
    for text, project in (("Deploy on Fridays.", "default"), ("Lint with ruff.", "programming")):
        stored = await call(client, "store_memory", {"text": text, "context": {"project": project}})
        await call(client, "forget_memories", {"memory_ids": [stored["memory_id"]]})

    listed = await client.call_tool("restore_memories", {})
    refused = await client.call_tool("restore_memories", {"project": "web*"})

    assert listed.structured_content is not None
    assert listed.structured_content["message"] == (
        "1 entry in the trash of project 'default' and global; 1 more in other projects "
        "(project '*' lists them)"
    )
    assert "[default]" in listed.content[0].text  # type: ignore[union-attr]  # the text block
    assert refused.is_error
    (block,) = refused.content
    assert isinstance(block, TextContent) and json.loads(block.text)["error"] == "invalid_project"
