"""related_memories: the memories linked to one memory, up to three links away.

No `from __future__ import annotations` in the tool modules: the SDK reads the annotations."""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from cognitive_memory.core.links import RELATED_LIMIT
from cognitive_memory.service import LinkDepth, MemoryId, RelatedResult, RelationName, format_related
from interfaces.mcp_tools.state import ServerState, answer, service_of

__all__ = ["register"]

DESCRIPTION = (
    "The memories linked to a memory by link_memories, following links in both directions up to "
    "depth links away (1-3), nearest first. Each comes with the relation and direction of the link "
    f"that reached it and the path of ids from the start. At most {RELATED_LIMIT} memories are "
    "returned; truncated says when more are linked."
)


def register(server: MCPServer[ServerState]) -> None:
    @server.tool(
        name="related_memories",
        title="Related memories",
        description=DESCRIPTION,
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
    )
    def related_memories(
        memory_id: Annotated[MemoryId, Field(description="The memory to start from.")],
        ctx: Context[ServerState, Any],
        depth: LinkDepth = 1,
        relations: Annotated[
            list[RelationName] | None, Field(description="Follow only these relations. Default: all.")
        ] = None,
    ) -> Annotated[CallToolResult, RelatedResult]:
        result = service_of(ctx).related_memories(memory_id, depth, relations or ())
        return answer(result, format_related(result))
