"""update_memory: correct or extend a memory in place, keeping its id, history and links.

No `from __future__ import annotations` in the tool modules: the SDK reads the annotations."""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from cognitive_memory.service import (
    Importance,
    KeyChange,
    Kind,
    Level,
    MemoryChanges,
    MemoryId,
    Metadata,
    NewText,
    SourceInfo,
    Tags,
    UpdateResult,
    format_update,
)
from interfaces.mcp_tools.state import ServerState, answer, service_of

__all__ = ["register"]

DESCRIPTION = (
    "Correct a memory in place when a fact changed or was wrong: it keeps its id, uses and links, "
    "its previous state a version (get_memories include_history). Memories loaded from markdown or "
    "git are refused: change their file."
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
        memory_id: MemoryId,
        ctx: Context[ServerState, Any],
        text: NewText | None = None,
        tags: Annotated[Tags | None, Field(description="Replace all of its tags.")] = None,
        importance_score: Importance | None = None,
        hierarchy_level: Level | None = None,
        memory_type: Kind | None = None,
        source_info: SourceInfo | None = None,
        key: KeyChange | None = None,
        metadata: Annotated[Metadata | None, Field(description="Replaces all; {} clears.")] = None,
    ) -> Annotated[CallToolResult, UpdateResult]:
        changes = MemoryChanges(
            text=text,
            tags=tags,
            importance_score=importance_score,
            hierarchy_level=hierarchy_level,
            memory_type=memory_type,
            source_info=source_info,
            key=key,
            metadata=metadata,
        )
        result = service_of(ctx).update_memory(memory_id, changes)
        return answer(result, format_update(result))
