"""store_memory: keep an experience, insight or fact."""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from cognitive_memory.core.validation import MAX_TEXT_CHARS
from cognitive_memory.service import StoreContext, StoreResult, format_store
from interfaces.mcp_tools.state import ServerState, answer, call_project, call_session, off_loop, service_of

__all__ = ["register"]

DESCRIPTION = (
    "Keep a fact, decision, insight or experience for future sessions, one self-contained memory "
    "per call. Level and type are inferred when omitted. The same text already in the project is "
    "not stored again (duplicate: true); near duplicates come back in similar: prefer update_memory "
    "to correct one. A held context.key updates its memory (updated: true)."
)


def register(server: MCPServer[ServerState]) -> None:
    @server.tool(
        name="store_memory",
        title="Store memory",
        description=DESCRIPTION,
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False),
    )
    async def store_memory(
        text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)],
        ctx: Context[ServerState, Any],
        context: StoreContext | None = None,
        dry_run: Annotated[bool, Field(description="Store nothing; say what storing would do.")] = False,
    ) -> Annotated[CallToolResult, StoreResult]:
        project = await call_project(ctx, context.project if context else None)
        service, session = service_of(ctx), call_session(ctx)
        result = await off_loop(
            lambda: service.store_experience(text, context, project=project, session=session, dry_run=dry_run)
        )
        return answer(result, format_store(result))
