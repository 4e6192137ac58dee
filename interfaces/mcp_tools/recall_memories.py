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
    "Recall memories relevant to a query from long-term memory. Returns core memories (the best "
    "matches), peripheral memories (related, in rank order after the core) and bridge memories "
    "(far from the query yet connected to what it matched: unexpected but useful links); "
    "max_results caps all three together, bridges taking what the others leave. Only memories "
    "with real evidence of relevance are returned: an empty answer says so in its message. "
    "detail 'brief' (default) gives each memory's id, content (whole up to "
    f"{BRIEF_CONTENT_CHARS} characters, else cut with truncated: true; get_memories returns it "
    "whole), level, type, score, reason (what found it), source, date, tags, project; 'full' "
    "gives whole records with every score, dates and access history. Recall searches the "
    "current project and the memories stored as 'global'; filters.projects ['*'] searches every "
    "project."
)


def register(server: MCPServer[ServerState], max_results: int) -> None:
    @server.tool(
        name="recall_memories",
        title="Recall memories",
        description=DESCRIPTION,
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    async def recall_memories(
        query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS, description="What to recall.")],
        ctx: Context[ServerState, Any],
        types: Annotated[
            list[RecallType] | None,
            Field(description="Which lists to return: core, peripheral, bridge. Default: all."),
        ] = None,
        max_results: Annotated[
            int,
            Field(ge=1, le=max_results, description="Most memories to return, bridges included."),
            JsonNumber,
        ] = min(10, max_results),
        detail: Annotated[
            Detail,
            Field(description="brief: text, one score and why it was found; full: whole records."),
        ] = "brief",
        include_bridges: Annotated[bool, Field(description="Look for bridge memories.")] = True,
        filters: Annotated[
            RecallFilters | None,
            Field(description="Only memories with these tags, levels, types, sources, projects or dates."),
        ] = None,
        project: Annotated[
            ProjectName | None,
            Field(description="The project to recall from (with the global memories). Default: current."),
        ] = None,
    ) -> Annotated[CallToolResult, RecallResult]:
        scope = await call_project(ctx, project)
        recall = partial(
            service_of(ctx).retrieve_memories, query, types, max_results, include_bridges, filters
        )
        session = call_session(ctx)
        result = await off_loop(lambda: recall(project=scope, detail=detail, session=session))
        return answer(result, format_recall(result), exclude_none=True)
