"""The published output schemas are inlined, and real answers validate against them."""

from __future__ import annotations

import json

import pytest
from mcp import Client

pytestmark = pytest.mark.anyio


async def test_recall_publishes_an_inlined_schema_its_answers_satisfy(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    schema = tools["recall_memories"].output_schema
    assert schema is not None
    assert "$ref" not in json.dumps(schema)
    assert {"query", "total_results", "memories"} <= set(schema["properties"])
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
