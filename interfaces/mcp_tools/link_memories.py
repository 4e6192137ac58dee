"""link_memories: a typed, weighted link from one memory to another (relates_to, supersedes, ...).

No `from __future__ import annotations` in the tool modules: the SDK reads the annotations."""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations

from cognitive_memory.service import LinkNote, LinkResult, LinkWeight, MemoryId, RelationName, format_link
from interfaces.mcp_tools.state import ServerState, answer, service_of

__all__ = ["register"]

DESCRIPTION = (
    "Link two memories: from_id <relation> to_id; relation: relates_to, similar, depends_on, "
    "part_of, example_of, caused_by, contradicts, supersedes or your own snake_case name. Linked "
    "memories lift each other in recall by weight (0-1, default 0.8); supersedes also ranks the "
    "newer first. Linking again changes only a weight given."
)


def register(server: MCPServer[ServerState]) -> None:
    @server.tool(
        name="link_memories",
        title="Link memories",
        description=DESCRIPTION,
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        ),
    )
    def link_memories(
        from_id: MemoryId,
        to_id: MemoryId,
        relation: RelationName,
        ctx: Context[ServerState, Any],
        note: LinkNote | None = None,
        weight: LinkWeight | None = None,
    ) -> Annotated[CallToolResult, LinkResult]:
        result = service_of(ctx).link_memories(from_id, to_id, relation, note, weight)
        return answer(result, format_link(result))
