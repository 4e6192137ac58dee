"""recall_memories: core, peripheral and bridge memories for a query.

No `from __future__ import annotations` in the tool modules: the SDK reads the annotations,
and the max_results bound is a value known only when the server is built."""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from cognitive_memory.core.validation import MAX_QUERY_CHARS, MAX_TAG_CHARS, MAX_TAGS
from interfaces.formatting import format_recall
from interfaces.mcp_tools.state import ServerState, answer, cli_of
from interfaces.schemas import LevelValue, MemoryTypeName, RecallResult, RecallSource, RecallType

__all__ = ["RecallFilters", "register"]

DESCRIPTION = (
    "Recall memories relevant to a query from long-term memory. Returns core memories (the best "
    "matches), peripheral memories (related, in rank order after the core) and bridge memories "
    "(far from the query yet connected to what it matched: unexpected but useful links). Each "
    "memory carries its scores, source, dates and access history."
)


class RecallFilters(BaseModel):
    """Recall only memories that match every given field (one of its values). Empty: no filter."""

    model_config = ConfigDict(extra="forbid")

    tags: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=MAX_TAG_CHARS)]],
        Field(max_length=MAX_TAGS, description="Memories carrying at least one of these tags."),
    ] = Field(default_factory=list)
    hierarchy_levels: Annotated[
        list[LevelValue], Field(description="0 concepts, 1 contexts, 2 episodes.")
    ] = Field(default_factory=list)
    memory_types: Annotated[list[MemoryTypeName], Field(description="episodic or semantic memories.")] = (
        Field(default_factory=list)
    )
    sources: Annotated[
        list[RecallSource],
        Field(description="Loaded markdown sections, git history patterns, or session lessons."),
    ] = Field(default_factory=list)


def register(server: MCPServer[ServerState], max_results: int) -> None:
    @server.tool(
        name="recall_memories",
        title="Recall memories",
        description=DESCRIPTION,
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    def recall_memories(
        query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS, description="What to recall.")],
        ctx: Context[ServerState, Any],
        types: Annotated[
            list[RecallType] | None,
            Field(description="Which lists to return: core, peripheral, bridge. Default: all."),
        ] = None,
        max_results: Annotated[
            int, Field(ge=1, le=max_results, description="Most core + peripheral memories to return.")
        ] = min(10, max_results),
        include_bridges: Annotated[bool, Field(description="Look for bridge memories.")] = True,
        filters: Annotated[
            RecallFilters | None,
            Field(description="Recall only memories with these tags, levels, types or sources."),
        ] = None,
    ) -> Annotated[CallToolResult, RecallResult]:
        given = filters.model_dump() if filters else None
        result = cli_of(ctx).retrieve_memories(query, types, max_results, include_bridges, given)
        return answer(result, format_recall(result))
