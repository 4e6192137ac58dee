"""Bad input gets an isError result with {success: false, error, message}; nothing is stored."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

from cognitive_memory.core.memory import Vector
from cognitive_memory.core.validation import MAX_TEXT_CHARS
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem
from interfaces.mcp_server import create_server

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL


def error_body(result: CallToolResult) -> dict[str, Any]:
    """The error body, which travels as the JSON text of the only content block."""
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, TextContent)
    body: dict[str, Any] = json.loads(block.text)
    assert set(body) == {"success", "error", "message"}
    return body


BAD_CALLS = [
    ("store_memory", {}, "missing_field"),
    ("store_memory", {"text": ""}, "empty_text"),
    ("store_memory", {"text": "  \n\t "}, "empty_text"),
    ("store_memory", {"text": 42}, "invalid_type"),
    ("store_memory", {"text": ["a", "list"]}, "invalid_type"),
    ("store_memory", {"text": "x" * (MAX_TEXT_CHARS + 1)}, "text_too_long"),
    ("store_memory", {"text": "ok", "context": {"importance_score": 1.5}}, "out_of_range"),
    ("store_memory", {"text": "ok", "context": {"importance_score": -0.1}}, "out_of_range"),
    ("store_memory", {"text": "ok", "context": {"hierarchy_level": 3}}, "out_of_range"),
    ("store_memory", {"text": "ok", "context": {"memory_type": "dream"}}, "invalid_value"),
    ("store_memory", {"text": "ok", "context": {"colour": "blue"}}, "unknown_field"),
    ("store_memory", {"text": "ok", "context": "not an object"}, "invalid_type"),
    ("store_memory", {"text": "ok", "context": {"tags": "one-tag"}}, "invalid_type"),
    ("recall_memories", {"query": "x", "max_results": -3}, "out_of_range"),
    ("recall_memories", {"query": "x", "max_results": 0}, "out_of_range"),
    ("recall_memories", {"query": "x", "max_results": 51}, "out_of_range"),
    ("recall_memories", {"query": "x", "max_results": "ten"}, "invalid_type"),
    ("recall_memories", {"query": "x", "types": ["everything"]}, "invalid_value"),
    ("recall_memories", {"query": "   "}, "empty_text"),
    ("recall_memories", {}, "missing_field"),
    ("session_lessons", {}, "missing_field"),
    ("session_lessons", {"lesson_content": "x", "lesson_type": "nope"}, "invalid_value"),
    ("session_lessons", {"lesson_content": "x", "importance": "extreme"}, "invalid_value"),
    ("session_lessons", {"lesson_content": "x", "session_context": "y" * 2001}, "text_too_long"),
    ("memory_status", {"detailed": "maybe"}, "invalid_type"),
    ("no_such_tool", {}, "unknown_tool"),
]


@pytest.mark.parametrize(("tool", "arguments", "code"), BAD_CALLS, ids=[f"{t}-{c}" for t, _, c in BAD_CALLS])
async def test_bad_call_is_an_error_result_and_stores_nothing(
    client: Client, real_system: CognitiveSystem, tool: str, arguments: dict[str, Any], code: str
) -> None:
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    assert result.structured_content is None  # clients validate structured content against the schema
    body = error_body(result)
    assert body["success"] is False
    assert body["error"] == code
    assert len(body["message"]) > 10
    assert real_system.records.memories.counts().total == 0
    assert real_system.vectors.count() == 0
    follow_up = await client.call_tool("store_memory", {"text": "The server still answers after an error."})
    assert not follow_up.is_error


async def test_error_message_names_the_field_and_range(client: Client) -> None:
    result = await client.call_tool("recall_memories", {"query": "x", "max_results": -3})
    message = error_body(result)["message"]
    assert "`max_results`" in message and "greater than or equal to 1" in message
    assert "Nothing was stored" in message


class BrokenEncoder:
    """An encoder that fails the way a bug would: with an unexpected exception."""

    name = "broken"
    dimension = 384
    is_ready = True

    def warm_up(self) -> None:
        """Nothing to load."""

    def encode(self, texts: Sequence[str]) -> Vector:
        if texts and texts[0] == "crash":
            raise RuntimeError("boom: secret internal detail")
        return np.ones((len(texts), 384), dtype=np.float32) / np.sqrt(384)


async def test_an_unexpected_crash_is_reported_without_internals_and_the_server_goes_on() -> None:
    system = build_system(Settings(env_file=None), "test", encoder=BrokenEncoder())
    try:
        async with Client(create_server(system)) as client:
            crashed = await client.call_tool("store_memory", {"text": "crash"})
            assert crashed.is_error
            body = error_body(crashed)
            assert body["error"] == "internal_error"
            assert "secret internal detail" not in body["message"]
            assert system.records.memories.counts().total == 0
            fine = await client.call_tool("store_memory", {"text": "this one works"})
            assert not fine.is_error
    finally:
        system.close()
