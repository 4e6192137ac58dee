"""recall_memories: core, peripheral and bridge memories for a query.

No `from __future__ import annotations` in the tool modules: the SDK reads the annotations,
and the max_results bound is a value known only when the server is built."""

from functools import partial
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from cognitive_memory.core.validation import MAX_QUERY_CHARS
from cognitive_memory.service import (
    BRIEF_CONTENT_CHARS,
    Detail,
    JsonNumber,
    ProjectName,
    RecallFilters,
    RecallResult,
    RecallType,
    format_recall,
)
from interfaces.mcp_tools.state import ServerState, answer, call_project, call_session, off_loop, service_of

__all__ = ["register"]

DESCRIPTION = (
    "Recall what memory holds about a query: call it when a task starts and when earlier "
    "context could help. Returns core memories (best matches), peripheral (related) and bridges "
    "(distant but connected), at most max_results in all, only those with evidence of relevance. "
    f"A brief memory has its id, text (cut at {BRIEF_CONTENT_CHARS} characters: get_memories has it "
    "whole), score, why it was found, source and date; full: whole records and every score. Scope: "
    "this project and 'global'."
)


def register(server: MCPServer[ServerState], max_results: int) -> None:
    @server.tool(
        name="recall_memories",
        title="Recall memories",
        description=DESCRIPTION,
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    async def recall_memories(
        query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS)],
        ctx: Context[ServerState, Any],
        types: Annotated[list[RecallType] | None, Field(description="Default: all.")] = None,
        max_results: Annotated[
            int,
            Field(ge=1, le=max_results),
            JsonNumber,
        ] = min(10, max_results),
        detail: Detail = "brief",
        include_bridges: bool = True,
        filters: RecallFilters | None = None,
        project: ProjectName | None = None,
        explain: Annotated[list[str] | None, Field(description="Memory ids")] = None,
    ) -> Annotated[CallToolResult, RecallResult]:
        scope = await call_project(ctx, project)
        recall = partial(
            service_of(ctx).retrieve_memories, query, types, max_results, include_bridges, filters
        )
        session = call_session(ctx)
        result = await off_loop(
            lambda: recall(project=scope, detail=detail, session=session, explain=explain or ())
        )
        return answer(result, format_recall(result))
