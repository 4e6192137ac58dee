"""forget_memories through the SDK's in-memory client: gone everywhere, by id or by key, missing ids
and keys named, loaded memories kept with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client
from mcp.types import TextContent

from cognitive_memory.service import MemoryService
from cognitive_memory.system import CognitiveSystem
from tests.mcp.tools import call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL


async def recalled_ids(client: Client, query: str) -> set[str]:
    # Full detail: whole ids, as the other tools answer with them (brief ones are short).
    arguments = {"query": query, "max_results": 20, "detail": "full"}
    lists = (await call(client, "recall_memories", arguments))["memories"]
    return {memory["id"] for memory in lists["core"] + lists["peripheral"] + lists["bridge"]}


async def test_a_forgotten_memory_is_gone_from_recall_status_and_the_index(
    client: Client, real_system: CognitiveSystem
) -> None:
    wrong = await call(client, "store_memory", {"text": "The staging database password rotates monthly."})
    right = await call(client, "store_memory", {"text": "The staging database password rotates weekly."})
    assert {wrong["memory_id"], right["memory_id"]} <= await recalled_ids(client, "staging password rotation")

    result = await client.call_tool(
        "forget_memories", {"memory_ids": [wrong["memory_id"], "no-such-memory", wrong["memory_id"]]}
    )

    assert not result.is_error
    body = result.structured_content
    assert body is not None
    assert body["forgotten"] == [wrong["memory_id"]]
    assert (body["missing"], body["kept"]) == (["no-such-memory"], [])
    assert body["message"] == "Forgot 1 of 2 memories"
    text = result.content[0].text  # type: ignore[union-attr]  # the first block is the text answer
    assert f"Forgotten: {wrong['memory_id']}" in text and "Not found: no-such-memory" in text
    assert await recalled_ids(client, "staging password rotation") == {right["memory_id"]}
    real_system.flush()
    assert real_system.vectors.ids() == [right["memory_id"]]
    status = await call(client, "memory_status", {})
    assert status["memory_counts"]["total_memories"] == 1
    again = await call(client, "forget_memories", {"memory_ids": [wrong["memory_id"]]})
    assert (again["forgotten"], again["missing"]) == ([], [wrong["memory_id"]])


async def test_memories_loaded_from_a_file_are_kept_with_the_way_to_remove_them(
    client: Client, real_system: CognitiveSystem, tmp_path: Path
) -> None:
    note = tmp_path / "runbook.md"
    note.write_text("# Runbook\n\nRestart the ingest worker when the queue backs up past ten thousand.\n")
    MemoryService(real_system).load_markdown(str(note))
    (loaded,) = await recalled_ids(client, "the ingest queue is backing up")

    body = await call(client, "forget_memories", {"memory_ids": [loaded]})

    assert (body["forgotten"], body["missing"]) == ([], [])
    assert body["kept"] == [
        {
            "id": loaded,
            "reason": f"loaded from {note}: edit the file and load it again, or run "
            f"`memory_system remove-file {note}`",
        }
    ]
    assert await recalled_ids(client, "the ingest queue is backing up") == {loaded}


async def test_forgetting_nothing_or_too_many_is_refused(client: Client) -> None:
    empty = await client.call_tool("forget_memories", {"memory_ids": []})
    many = await client.call_tool("forget_memories", {"memory_ids": [f"id-{n}" for n in range(101)]})
    assert empty.is_error and many.is_error


async def test_memories_are_forgotten_by_key_in_the_project_else_global_and_unknown_keys_are_missing(
    client: Client,
) -> None:
    api = await call(
        client,
        "store_memory",
        {"text": "API deploys on Fridays.", "context": {"project": "api", "key": "deploy"}},
    )
    web = await call(
        client, "store_memory", {"text": "Web deploys daily.", "context": {"project": "web", "key": "deploy"}}
    )
    shared = await call(
        client, "store_memory", {"text": "Tabs are banned.", "context": {"project": "global", "key": "style"}}
    )

    body = await call(
        client,
        "forget_memories",
        {"keys": ["DEPLOY", "style", "no-such-key"], "memory_ids": [api["memory_id"]], "project": "api"},
    )

    assert sorted(body["forgotten"]) == sorted([api["memory_id"], shared["memory_id"]])
    assert (body["missing"], body["message"]) == (["no-such-key"], "Forgot 2 of 4 memories")
    left = await call(client, "get_memories", {"keys": ["deploy"], "project": "web"})
    assert [m["id"] for m in left["memories"]] == [web["memory_id"]]
    gone = await call(client, "get_memories", {"keys": ["deploy"], "project": "api"})
    assert gone["missing"] == ["deploy"]
    nothing = await call(client, "forget_memories", {"keys": ["deploy"], "project": "api"})
    assert (nothing["forgotten"], nothing["missing"]) == ([], ["deploy"])


async def test_forgetting_needs_ids_or_keys_and_refuses_a_key_with_spaces(client: Client) -> None:
    for arguments, code in (({}, "missing_field"), ({"keys": ["two words"]}, "invalid_value")):
        result = await client.call_tool("forget_memories", arguments)
        assert result.is_error, arguments
        (block,) = result.content
        assert isinstance(block, TextContent) and json.loads(block.text)["error"] == code
