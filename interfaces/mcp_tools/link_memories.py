"""link_memories: a typed link from one memory to another (relates_to, supersedes, ...).

No `from __future__ import annotations` in the tool modules: the SDK reads the annotations."""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from cognitive_memory.service import LinkNote, LinkResult, MemoryId, RelationName, format_link
from interfaces.mcp_tools.state import ServerState, answer, service_of

__all__ = ["register"]

DESCRIPTION = (
    "Link two memories with a typed relation: from_id relates_to, supersedes, contradicts, "
    "caused_by, example_of or part_of to_id. Use supersedes when a newer memory replaces an older "
    "one: recall then ranks the newer first and marks the older with superseded_by. Linked memories "
    "also lift each other in recall. Linking again changes nothing; unknown ids, a link from a "
    "memory to itself and a supersedes cycle are refused."
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
        from_id: Annotated[MemoryId, Field(description="The memory the link starts from.")],
        to_id: Annotated[MemoryId, Field(description="The memory the link points to.")],
        relation: Annotated[RelationName, Field(description="How from_id relates to to_id.")],
        ctx: Context[ServerState, Any],
        note: Annotated[LinkNote | None, Field(description="Why they are linked (optional).")] = None,
    ) -> Annotated[CallToolResult, LinkResult]:
        result = service_of(ctx).link_memories(from_id, to_id, relation, note)
        return answer(result, format_link(result))
