"""Every tool's arguments are closed: an unknown name is refused with unknown_field, naming it and
the names the tool takes, and every input schema says additionalProperties: false at every level."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

from cognitive_memory.system import CognitiveSystem
from tests.mcp.tools import TOOL_NAMES, call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL

# A call each tool would carry out, given the ids of two stored memories.
VALID_CALLS: dict[str, Callable[[str, str], dict[str, Any]]] = {
    "store_memory": lambda a, b: {"text": "The deploy runs on Fridays."},
    "recall_memories": lambda a, b: {"query": "deploy"},
    "session_lessons": lambda a, b: {"lesson_content": "Check the deploy log first."},
    "memory_status": lambda a, b: {},
    "forget_memories": lambda a, b: {"memory_ids": [a]},
    "get_memories": lambda a, b: {"memory_ids": [a, b]},
    "list_memories": lambda a, b: {},
    "update_memory": lambda a, b: {"memory_id": a, "text": "The deploy runs on Mondays."},
    "link_memories": lambda a, b: {"from_id": a, "to_id": b, "relation": "relates_to"},
    "unlink_memories": lambda a, b: {"from_id": a, "to_id": b},
    "related_memories": lambda a, b: {"memory_id": a},
    "prune_memories": lambda a, b: {"tags": ["scratch"]},
    "restore_memories": lambda a, b: {},
    "snapshot_memories": lambda a, b: {"list": True},
}


def error_body(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error
    (block,) = result.content
    assert isinstance(block, TextContent)
    body: dict[str, Any] = json.loads(block.text)
    return body


def object_levels(schema: Any) -> Iterator[dict[str, Any]]:
    """Every object schema inside ``schema``, ``$defs`` and ``anyOf`` branches included."""
    if isinstance(schema, dict):
        if schema.get("type") == "object" or "properties" in schema:
            yield schema
        for value in schema.values():
            yield from object_levels(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from object_levels(value)


@pytest.fixture
async def two_ids(client: Client) -> tuple[str, str]:
    first = await call(client, "store_memory", {"text": "The deploy runs on Fridays at noon."})
    second = await call(
        client,
        "store_memory",
        {"text": "Scratch: the cache key holds the branch.", "context": {"tags": ["scratch"]}},
    )
    return first["memory_id"], second["memory_id"]


def test_every_tool_has_a_valid_call() -> None:
    assert set(VALID_CALLS) == TOOL_NAMES


@pytest.mark.parametrize("tool", sorted(TOOL_NAMES))
async def test_an_unknown_argument_is_refused_naming_it_and_the_tool_arguments(
    client: Client, hash_system: CognitiveSystem, two_ids: tuple[str, str], tool: str
) -> None:
    schemas = {listed.name: listed.input_schema for listed in (await client.list_tools()).tools}
    arguments = VALID_CALLS[tool](*two_ids) | {"colour": "blue"}
    body = error_body(await client.call_tool(tool, arguments))
    assert body["error"] == "unknown_field"
    assert "`colour`: unknown argument" in body["message"]
    taken = body["message"].split(f"{tool} takes ", 1)[1].split(".")[0].split(", ")
    assert taken == list(schemas[tool]["properties"])
    assert hash_system.records.memories.counts().total == 2  # nothing stored, forgotten or pruned
    (record,) = (await call(client, "get_memories", {"memory_ids": [two_ids[0]]}))["memories"]
    assert record["content"] == "The deploy runs on Fridays at noon."
    assert not (await client.call_tool(tool, VALID_CALLS[tool](*two_ids))).is_error


async def test_a_typo_of_filters_is_refused_not_ignored(client: Client) -> None:
    await call(
        client,
        "store_memory",
        {"text": "The database password rotates monthly.", "context": {"tags": ["auth"]}},
    )
    body = error_body(
        await client.call_tool("recall_memories", {"query": "database", "filter": {"tags": ["auth"]}})
    )
    assert body["error"] == "unknown_field"
    assert "`filter`: unknown argument" in body["message"]
    assert "filters" in body["message"]
    spelt = await client.call_tool("recall_memories", {"query": "database", "filters": {"tags": ["auth"]}})
    assert not spelt.is_error


async def test_importance_at_the_top_level_is_refused_and_nothing_is_stored(
    client: Client, hash_system: CognitiveSystem
) -> None:
    body = error_body(await client.call_tool("store_memory", {"text": "Ship on Tuesdays.", "importance": 8}))
    assert body["error"] == "unknown_field"
    assert body["message"] == (
        "Invalid arguments for store_memory: `importance`: unknown argument; store_memory takes text, "
        "context, dry_run. Nothing was stored or changed."
    )
    assert hash_system.records.memories.counts().total == 0


@pytest.mark.parametrize(
    ("tool", "arguments", "problem"),
    [
        ("store_memory", {"text": "x", "key": "db"}, "`key`: unknown argument; use `context.key`"),
        (
            "store_memory",
            {"text": "x", "category": "ops"},
            "`category`: unknown argument; use `context.tags`",
        ),
        (
            "store_memory",
            {"text": "x", "context": {"category": "ops"}},
            "`context.category`: unknown field; use `context.tags`",
        ),
        ("store_memory", {"content": "x"}, "`content`: unknown argument; use `text`"),
        (
            "link_memories",
            {"from_id": "a", "to_id": "b", "relation": "similar", "strength": 0.9},
            "`strength`: unknown argument; use `weight`",
        ),
        (
            "link_memories",
            {"from": "a", "to": "b", "relationType": "uses"},
            "`from`: unknown argument; use `from_id`",
        ),
        ("forget_memories", {"entityName": "db"}, "`entityName`: unknown argument; use `keys`"),
        ("get_memories", {"ids": ["a"]}, "`ids`: unknown argument; use `memory_ids`"),
    ],
)
async def test_another_servers_name_for_a_field_is_refused_naming_ours(
    client: Client, hash_system: CognitiveSystem, tool: str, arguments: dict[str, Any], problem: str
) -> None:
    body = error_body(await client.call_tool(tool, arguments))
    # missing_field when the name stood for a required one (content for text)
    assert body["error"] in ("unknown_field", "missing_field")
    assert problem in body["message"]
    assert hash_system.records.memories.counts().total == 0


async def test_an_unknown_nested_field_names_the_fields_of_its_object(client: Client) -> None:
    body = error_body(await client.call_tool("store_memory", {"text": "x", "context": {"importance": 8}}))
    assert body["error"] == "unknown_field"
    assert "`context.importance`: unknown field; `context` takes " in body["message"]
    assert "importance_score" in body["message"]


async def test_every_input_schema_is_closed_at_every_object_level(client: Client) -> None:
    tools = (await client.list_tools()).tools
    assert {tool.name for tool in tools} == TOOL_NAMES
    levels = [(tool.name, level) for tool in tools for level in object_levels(tool.input_schema)]
    assert len(levels) > len(tools)  # the nested models (context, filters) are walked too
    closed = [(name, level) for name, level in levels if "properties" in level]
    assert [name for name, level in closed if level.get("additionalProperties") is not False] == []
    # The one open object is the caller's own fields (context.metadata, metadata, filters.metadata).
    assert sorted(name for name, level in levels if "properties" not in level) == [
        "list_memories",
        "recall_memories",
        "store_memory",
        "update_memory",
    ]


async def test_300000_unknown_fields_are_refused_unread_in_a_short_answer(
    client: Client, hash_system: CognitiveSystem
) -> None:
    flood = {f"field{i}": i for i in range(300_000)}
    for tool, arguments, place in [
        ("recall_memories", {"query": "deploy", "filters": flood}, "`filters` holds 300,000 names"),
        ("list_memories", {"filters": flood}, "`filters` holds 300,000 names"),
        ("store_memory", {"text": "The deploy runs on Fridays.", "context": flood}, "`context` holds"),
        ("get_memories", {"memory_ids": [], **flood}, "the arguments hold 300,001 names"),
    ]:
        result = await client.call_tool(tool, arguments)
        body = error_body(result)
        assert body["error"] == "too_many_fields"
        assert place in body["message"]
        assert "Nothing was stored or changed." in body["message"]
        assert len(result.content[0].text) < 1_000  # type: ignore[union-attr]  # TextContent, as error_body checked
    assert hash_system.records.memories.counts().total == 0


async def test_a_refusal_lists_ten_problems_then_counts_the_rest_and_names_each_object_once(
    client: Client,
) -> None:
    unknown = {f"field{i}": i for i in range(90)}
    body = error_body(await client.call_tool("list_memories", {"filters": unknown}))
    assert body["error"] == "unknown_field"
    message = body["message"]
    assert message.count("unknown field") == 10
    assert "and 80 more" in message
    assert message.count("`filters` takes") == 1
    assert len(message) < 1_000


async def test_a_long_unknown_name_is_cut_in_the_refusal(client: Client) -> None:
    name = "x" * 50_000
    body = error_body(await client.call_tool("recall_memories", {"query": "deploy", "filters": {name: 1}}))
    assert body["error"] == "unknown_field"
    assert len(body["message"]) < 1_000
