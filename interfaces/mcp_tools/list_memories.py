"""list_memories: browse memories without a query, filtered, ordered and a page at a time.

No `from __future__ import annotations` in the tool modules: the SDK reads the annotations."""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from cognitive_memory.core.validation import MAX_QUERY_CHARS
from cognitive_memory.service import (
    DEFAULT_PAGE_SIZE,
    MAX_CURSOR_CHARS,
    MAX_PAGE_SIZE,
    JsonNumber,
    ListResult,
    OrderBy,
    ProjectName,
    RecallFilters,
    format_list,
)
from interfaces.mcp_tools.state import ServerState, answer, call_project, call_session, off_loop, service_of

__all__ = ["register"]

DESCRIPTION = (
    "Browse memories without a query: newest first, or by last access, importance or access count, "
    "with recall_memories' filters and scope. Returns a page, the total and next_cursor: pass it "
    "back as cursor (same order_by and filters) for the next page. overview: also the tags in use "
    "and the sessions (counts, first and last times) of every match."
)


def register(server: MCPServer[ServerState]) -> None:
    @server.tool(
        name="list_memories",
        title="List memories",
        description=DESCRIPTION,
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
    )
    async def list_memories(
        ctx: Context[ServerState, Any],
        filters: RecallFilters | None = None,
        text: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=MAX_QUERY_CHARS,
                description="Each word must appear (typos tolerated).",
            ),
        ] = None,
        order_by: OrderBy = "created",
        limit: Annotated[int, Field(ge=1, le=MAX_PAGE_SIZE), JsonNumber] = DEFAULT_PAGE_SIZE,
        cursor: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=MAX_CURSOR_CHARS,
            ),
        ] = None,
        project: ProjectName | None = None,
        overview: bool = False,
    ) -> Annotated[CallToolResult, ListResult]:
        scope = await call_project(ctx, project)
        service, session = service_of(ctx), call_session(ctx)
        result = await off_loop(
            lambda: service.list_memories(
                filters,
                order_by,
                limit,
                cursor,
                project=scope,
                session=session,
                text=text,
                overview=overview,
            )
        )
        return answer(result, format_list(result))
