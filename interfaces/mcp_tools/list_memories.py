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
from interfaces.mcp_tools.state import ServerState, answer, call_project, off_loop, service_of

__all__ = ["register"]

DESCRIPTION = (
    "List memories without a query: the newest first, or the most recently accessed, most "
    "important or most accessed. Filters as recall_memories has them (tags, levels, types, sources, "
    "projects, dates); the current project and the 'global' memories unless filters.projects says "
    "otherwise (['*']: every project). Returns a page, the number of matches, and next_cursor: pass "
    "it back as cursor, with the same order_by, for the next page."
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
        filters: Annotated[
            RecallFilters | None,
            Field(description="Only memories with these tags, levels, types, sources, projects or dates."),
        ] = None,
        text: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=MAX_QUERY_CHARS,
                description="Only memories holding each of these words (typos tolerated).",
            ),
        ] = None,
        order_by: Annotated[
            OrderBy, Field(description="Sort order, newest or highest first (never accessed last).")
        ] = "created",
        limit: Annotated[
            int, Field(ge=1, le=MAX_PAGE_SIZE, description="Most memories on this page."), JsonNumber
        ] = DEFAULT_PAGE_SIZE,
        cursor: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=MAX_CURSOR_CHARS,
                description="The next_cursor of the previous page; omit for the first page.",
            ),
        ] = None,
        project: Annotated[
            ProjectName | None,
            Field(description="The project to list (with the global memories). Default: current."),
        ] = None,
    ) -> Annotated[CallToolResult, ListResult]:
        scope = await call_project(ctx, project)
        service = service_of(ctx)
        result = await off_loop(
            lambda: service.list_memories(filters, order_by, limit, cursor, project=scope, text=text)
        )
        return answer(result, format_list(result))
