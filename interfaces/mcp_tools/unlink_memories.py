"""unlink_memories: remove typed links from one memory to another.

No `from __future__ import annotations` in the tool modules: the SDK reads the annotations."""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from cognitive_memory.service import MemoryId, RelationName, UnlinkResult, format_unlink
from interfaces.mcp_tools.state import ServerState, answer, service_of

__all__ = ["register"]

DESCRIPTION = (
    "Remove the links from from_id to to_id (of one relation, or all); the other direction stays. "
    "None to remove is not an error."
)


def register(server: MCPServer[ServerState]) -> None:
    @server.tool(
        name="unlink_memories",
        title="Unlink memories",
        description=DESCRIPTION,
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
        ),
    )
    def unlink_memories(
        from_id: MemoryId,
        to_id: MemoryId,
        ctx: Context[ServerState, Any],
        relation: Annotated[RelationName | None, Field(description="Default: every one.")] = None,
    ) -> Annotated[CallToolResult, UnlinkResult]:
        result = service_of(ctx).unlink_memories(from_id, to_id, relation)
        return answer(result, format_unlink(result))
