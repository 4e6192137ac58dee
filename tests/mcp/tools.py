"""Helpers for the MCP tests."""

from __future__ import annotations

from typing import Any

from mcp import Client


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Call ``tool`` and return its structured content, failing the test on an error result."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content
