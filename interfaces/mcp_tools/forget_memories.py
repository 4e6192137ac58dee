"""forget_memories: remove memories that are wrong, outdated or unwanted.

No `from __future__ import annotations` in the tool modules: the SDK reads the annotations."""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from cognitive_memory.service import ForgetResult, format_forget
from interfaces.mcp_tools.state import ServerState, answer, service_of

__all__ = ["MAX_IDS", "register"]

MAX_IDS = 100

DESCRIPTION = (
    "Forget wrong, outdated or unwanted memories: they leave recall at once and go to the trash, "
    "where restore_memories brings them back for 30 days. Unknown ids come back as missing; memories "
    "loaded from markdown or git are kept (change their file)."
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
    def forget_memories(
        memory_ids: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=100)]],
            Field(min_length=1, max_length=MAX_IDS),
        ],
        ctx: Context[ServerState, Any],
    ) -> Annotated[CallToolResult, ForgetResult]:
        result = service_of(ctx).forget_memories(memory_ids)
        return answer(result, format_forget(result))
