"""The MCP tools, one module each; ``register_tools`` adds them all to a server."""

from __future__ import annotations

from mcp.server import MCPServer

from interfaces.mcp_tools import (
    forget_memories,
    get_memories,
    link_memories,
    list_memories,
    memory_status,
    prune_memories,
    recall_memories,
    related_memories,
    restore_memories,
    session_lessons,
    snapshot_memories,
    store_memory,
    unlink_memories,
    update_memory,
)
from interfaces.mcp_tools.state import ServerState

__all__ = ["ServerState", "register_tools"]


def register_tools(server: MCPServer[ServerState], *, max_results: int) -> None:
    store_memory.register(server)
    recall_memories.register(server, max_results)
    session_lessons.register(server)
    memory_status.register(server)
    forget_memories.register(server)
    restore_memories.register(server)
    get_memories.register(server)
    list_memories.register(server)
    update_memory.register(server)
    link_memories.register(server)
    unlink_memories.register(server)
    related_memories.register(server)
    prune_memories.register(server)
    snapshot_memories.register(server)
