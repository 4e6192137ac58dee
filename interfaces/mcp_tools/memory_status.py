"""memory_status: counts, storage health, recent activity and configuration."""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from cognitive_memory.service import StatusResult, format_status
from interfaces.mcp_tools.state import ServerState, answer, call_session, service_of

__all__ = ["register"]

DESCRIPTION = (
    "The memory's health: counts by level, type and project, the vector index and the writes "
    "waiting for it, recent activity, configuration."
)


def register(server: MCPServer[ServerState]) -> None:
    @server.tool(
        name="memory_status",
        title="Memory status",
        description=DESCRIPTION,
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    def memory_status(
        ctx: Context[ServerState, Any],
        detailed: Annotated[bool, Field(description="Add paths and internals.")] = False,
    ) -> Annotated[CallToolResult, StatusResult]:
        result = service_of(ctx).show_status(detailed, session=call_session(ctx))
        return answer(result, format_status(result))
