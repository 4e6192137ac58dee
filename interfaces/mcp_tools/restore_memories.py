"""restore_memories: undo a forget, from the trash.

No `from __future__ import annotations` in the tool modules: the SDK reads the annotations."""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from cognitive_memory.core.validation import MAX_PROJECT_CHARS
from cognitive_memory.service import UndoResult, format_undo
from interfaces.mcp_tools.state import ServerState, answer, call_project, off_loop, service_of

__all__ = ["MAX_IDS", "register"]

MAX_IDS = 100

DESCRIPTION = (
    "Undo forget_memories or a prune. Without ids: the trash of the project and global, newest "
    "first ('*': every project). With ids (of any project): bring those memories back whole "
    "(links and versions too)."
)


def register(server: MCPServer[ServerState]) -> None:
    @server.tool(
        name="restore_memories",
        title="Restore memories",
        description=DESCRIPTION,
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        ),
    )
    async def restore_memories(
        ctx: Context[ServerState, Any],
        memory_ids: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=100)]] | None,
            Field(max_length=MAX_IDS, description="The ids to restore; omit to list the trash."),
        ] = None,
        project: Annotated[str | None, Field(min_length=1, max_length=MAX_PROJECT_CHARS)] = None,
    ) -> Annotated[CallToolResult, UndoResult]:
        scope = project if memory_ids else await call_project(ctx, project)
        service = service_of(ctx)
        result = await off_loop(lambda: service.undo(memory_ids or [], project=scope))
        return answer(result, format_undo(result))
