"""get_memories: the full records of memories by id, optionally with their earlier versions.

No `from __future__ import annotations` in the tool modules: the SDK reads the annotations."""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from cognitive_memory.service import GetResult, format_get
from interfaces.mcp_tools.state import ServerState, answer, service_of

__all__ = ["MAX_IDS", "register"]

MAX_IDS = 100

DESCRIPTION = (
    "Read memories whole by id (text, tags, metadata, dates, access counts); with include_history "
    "also the versions update_memory replaced. Unknown ids come back in missing, forgotten ones in "
    "in_trash."
)


def register(server: MCPServer[ServerState]) -> None:
    @server.tool(
        name="get_memories",
        title="Get memories",
        description=DESCRIPTION,
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
    )
    def get_memories(
        memory_ids: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=100)]],
            Field(min_length=1, max_length=MAX_IDS),
        ],
        ctx: Context[ServerState, Any],
        include_history: bool = False,
    ) -> Annotated[CallToolResult, GetResult]:
        result = service_of(ctx).get_memories(memory_ids, include_history)
        return answer(result, format_get(result))
