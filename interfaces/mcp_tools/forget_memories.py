"""forget_memories: remove memories that are wrong, outdated or unwanted.

No `from __future__ import annotations` in the tool modules: the SDK reads the annotations."""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from cognitive_memory.service import ForgetResult, MemoryKey, ProjectName, format_forget
from interfaces.mcp_tools.state import ServerState, answer, call_project, off_loop, service_of

__all__ = ["MAX_IDS", "register"]

MAX_IDS = 100

DESCRIPTION = (
    "Forget wrong, outdated or unwanted memories, by id or key: they leave recall at once for the "
    "trash (restore_memories brings them back for 30 days). Unknown ids and keys come back as "
    "missing; memories loaded from markdown or git are kept (change their file)."
)


def register(server: MCPServer[ServerState]) -> None:
    @server.tool(
        name="forget_memories",
        title="Forget memories",
        description=DESCRIPTION,
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
        ),
    )
    async def forget_memories(
        ctx: Context[ServerState, Any],
        memory_ids: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=100)]] | None,
            Field(min_length=1, max_length=MAX_IDS),
        ] = None,
        keys: Annotated[list[MemoryKey] | None, Field(min_length=1, max_length=MAX_IDS)] = None,
        project: Annotated[ProjectName | None, Field(description="The keys' project (else global).")] = None,
    ) -> Annotated[CallToolResult, ForgetResult]:
        scope = await call_project(ctx, project) if keys else None
        service = service_of(ctx)
        result = await off_loop(lambda: service.forget_memories(memory_ids or [], keys or [], project=scope))
        return answer(result, format_forget(result))
