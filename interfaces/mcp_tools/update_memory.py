"""update_memory: correct or extend a memory in place, keeping its id, history and links.

No `from __future__ import annotations` in the tool modules: the SDK reads the annotations."""

from typing import Annotated, Any, Literal

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from cognitive_memory.core.validation import MAX_TAG_CHARS, MAX_TAGS, MAX_TEXT_CHARS
from interfaces.formatting import format_update
from interfaces.mcp_tools.state import ServerState, answer, cli_of
from interfaces.requests import MemoryChanges
from interfaces.schemas import UpdateResult

__all__ = ["register"]

DESCRIPTION = (
    "Change a memory in place when a fact changed or was wrong: give its id and any of text, tags, "
    "importance_score, hierarchy_level, memory_type, source_info. The memory keeps its id, access "
    "history and links; its previous state is kept as a version (get_memories with include_history). "
    "A new text is embedded and indexed again. Memories loaded from markdown or git are refused: "
    "change their file instead."
)


def register(server: MCPServer[ServerState]) -> None:
    @server.tool(
        name="update_memory",
        title="Update a memory",
        description=DESCRIPTION,
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
        ),
    )
    def update_memory(
        memory_id: Annotated[str, Field(min_length=1, max_length=100, description="The memory to change.")],
        ctx: Context[ServerState, Any],
        text: Annotated[
            str | None, Field(min_length=1, max_length=MAX_TEXT_CHARS, description="The new text.")
        ] = None,
        tags: Annotated[
            list[Annotated[str, Field(max_length=MAX_TAG_CHARS)]] | None,
            Field(max_length=MAX_TAGS, description="New tags; they replace all of its tags."),
        ] = None,
        importance_score: Annotated[float | None, Field(ge=0.0, le=1.0, description="0.0 to 1.0.")] = None,
        hierarchy_level: Annotated[
            int | None, Field(ge=0, le=2, description="0 = concept, 1 = context, 2 = episode.")
        ] = None,
        memory_type: Annotated[
            Literal["episodic", "semantic"] | None, Field(description="The new type.")
        ] = None,
        source_info: Annotated[
            str | None, Field(max_length=500, description="Where this knowledge came from.")
        ] = None,
    ) -> Annotated[CallToolResult, UpdateResult]:
        changes = MemoryChanges(
            text=text,
            tags=tags,
            importance_score=importance_score,
            hierarchy_level=hierarchy_level,
            memory_type=memory_type,
            source_info=source_info,
        )
        result = cli_of(ctx).update_memory(memory_id, changes)
        return answer(result, format_update(result))
