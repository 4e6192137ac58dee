"""The published schemas are lean, stay under their byte bounds, and real answers validate
against them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client

pytestmark = pytest.mark.anyio

# Issue #30's bounds on what every session of every client loads, and one per tool, so that a
# tool whose definition swells fails here before the whole answer does.
MAX_DESCRIPTIONS_AND_INPUTS = 12_288
MAX_ANSWER = 32_768
MAX_TOOL = 2_560
MAX_DESCRIPTION = 600


def _bytes(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


async def _listed(client: Client) -> dict[str, Any]:
    listed = await client.list_tools()
    return listed.model_dump(mode="json", by_alias=True, exclude_none=True)


async def test_every_tool_definition_stays_under_its_byte_bound(client: Client) -> None:
    listed = await _listed(client)
    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert {name: _bytes(tool) for name, tool in tools.items() if _bytes(tool) > MAX_TOOL} == {}
    long = {name: len(tool["description"].encode()) for name, tool in tools.items()}
    assert {name: size for name, size in long.items() if size > MAX_DESCRIPTION} == {}
    read = sum(len(tool["description"].encode()) + _bytes(tool["inputSchema"]) for tool in tools.values())
    assert read <= MAX_DESCRIPTIONS_AND_INPUTS
    assert _bytes(listed) <= MAX_ANSWER


async def test_schemas_carry_no_references_or_titles(client: Client) -> None:
    for tool in (await client.list_tools()).tools:
        text = json.dumps([tool.input_schema, tool.output_schema])
        assert '"$ref"' not in text and '"title"' not in text, tool.name


async def test_recall_publishes_a_lean_schema_its_answers_satisfy(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    schema = tools["recall_memories"].output_schema
    assert schema is not None
    assert {"query", "total_results", "memories"} <= set(schema["properties"])
    assert schema["properties"]["memories"] == {"type": "object"}  # its records: docs/tools.md
    await client.call_tool("store_memory", {"text": "The billing database needs a vacuum every week"})
    # The SDK client validates structured content against the listed schema and raises if it fails.
    query = "how often does the billing database need a vacuum?"
    full = await client.call_tool("recall_memories", {"query": query, "detail": "full"})
    brief = await client.call_tool("recall_memories", {"query": query})
    empty = await client.call_tool("recall_memories", {"query": "chocolate cake with strawberries"})
    assert not (full.is_error or brief.is_error or empty.is_error)
    assert full.structured_content is not None and brief.structured_content is not None
    assert full.structured_content["memories"]["core"][0]["score"]["total"] > 0
    assert isinstance(brief.structured_content["memories"]["core"][0]["score"], float)
    assert empty.structured_content is not None and empty.structured_content["message"]


async def test_an_optional_argument_is_published_without_null_yet_null_is_taken(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    filters = tools["recall_memories"].input_schema["properties"]["filters"]
    assert filters["type"] == "object" and filters["additionalProperties"] is False

    answered = await client.call_tool(
        "recall_memories", {"query": "deploys", "filters": None, "project": None}
    )

    assert not answered.is_error
