"""get_memories: the full records of memories by id, optionally with their earlier versions.

No `from __future__ import annotations` in the tool modules: the SDK reads the annotations."""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from cognitive_memory.service import GetResult, MemoryKey, ProjectName, format_get
from interfaces.mcp_tools.state import ServerState, answer, call_project, off_loop, service_of

__all__ = ["MAX_IDS", "register"]

MAX_IDS = 100

DESCRIPTION = (
    "Read memories whole by id or key; include_history adds the versions update_memory replaced. "
    "Unknown ids come back in missing, forgotten ones in in_trash."
)


def register(server: MCPServer[ServerState]) -> None:
    @server.tool(
        name="get_memories",
        title="Get memories",
        description=DESCRIPTION,
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
    )
    async def get_memories(
        ctx: Context[ServerState, Any],
        memory_ids: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=100)]] | None,
            Field(min_length=1, max_length=MAX_IDS),
        ] = None,
        include_history: bool = False,
        keys: Annotated[list[MemoryKey] | None, Field(min_length=1, max_length=MAX_IDS)] = None,
        project: Annotated[ProjectName | None, Field(description="The keys' project (else global).")] = None,
    ) -> Annotated[CallToolResult, GetResult]:
        scope = await call_project(ctx, project) if keys else None
        service = service_of(ctx)
        result = await off_loop(
            lambda: service.get_memories(memory_ids or [], include_history, keys or [], project=scope)
        )
        return answer(result, format_get(result))
