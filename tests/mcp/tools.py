"""Helpers for the MCP tests."""

from __future__ import annotations

from typing import Any

from mcp import Client

# Every tool the server offers.
TOOL_NAMES = frozenset(
    {
        "store_memory",
        "recall_memories",
        "session_lessons",
        "memory_status",
        "forget_memories",
        "update_memory",
        "get_memories",
        "list_memories",
        "link_memories",
        "unlink_memories",
        "related_memories",
        "prune_memories",
        "restore_memories",
        "snapshot_memories",
    }
)


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Call ``tool`` and return its structured content, failing the test on an error result."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content
