"""related_memories: the memories linked to one memory, up to five links away.

No `from __future__ import annotations` in the tool modules: the SDK reads the annotations."""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations

from cognitive_memory.core.links import RELATED_LIMIT
from cognitive_memory.service import LinkDepth, MemoryId, RelatedResult, RelationName, format_related
from interfaces.mcp_tools.state import ServerState, answer, service_of

__all__ = ["register"]

DESCRIPTION = (
    "The memories linked to one, both directions, up to depth links away, nearest first, each with "
    f"the link and path that reached it; the walk stops at {RELATED_LIMIT} (truncated)."
)


def register(server: MCPServer[ServerState]) -> None:
    @server.tool(
        name="related_memories",
        title="Related memories",
        description=DESCRIPTION,
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
    )
    def related_memories(
        memory_id: MemoryId,
        ctx: Context[ServerState, Any],
        depth: LinkDepth = 1,
        relations: list[RelationName] | None = None,
    ) -> Annotated[CallToolResult, RelatedResult]:
        result = service_of(ctx).related_memories(memory_id, depth, relations or ())
        return answer(result, format_related(result))
