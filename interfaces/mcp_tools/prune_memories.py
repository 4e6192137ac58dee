"""prune_memories: move old, unused or unimportant memories to the trash, dry run first.

No `from __future__ import annotations` in the tool modules: the SDK reads the annotations."""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from cognitive_memory.service import (
    KeepLatest,
    MaxImportance,
    NotAccessedDays,
    OlderThanDays,
    PruneLevels,
    PruneProjects,
    PruneRequest,
    PruneResult,
    PruneTags,
    format_prune,
)
from interfaces.mcp_tools.state import ServerState, answer, service_of

__all__ = ["register"]

DESCRIPTION = (
    "Clear out old noise: the memories matching every criterion given (at least one of the first "
    "six). The dry run (default) lists what would go and a confirm token; the same call with "
    "dry_run false and that token (valid once, 10 minutes) moves them to the trash. Memories loaded "
    "from markdown or git are never pruned."
)


def register(server: MCPServer[ServerState]) -> None:
    @server.tool(
        name="prune_memories",
        title="Prune memories",
        description=DESCRIPTION,
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
        ),
    )
    def prune_memories(
        ctx: Context[ServerState, Any],
        older_than_days: OlderThanDays = None,
        not_accessed_days: NotAccessedDays = None,
        max_importance: MaxImportance = None,
        tags: PruneTags | None = None,
        projects: PruneProjects | None = None,
        hierarchy_levels: PruneLevels | None = None,
        keep_latest: KeepLatest = 0,
        dry_run: bool = True,
        confirm: Annotated[str | None, Field(max_length=200)] = None,
    ) -> Annotated[CallToolResult, PruneResult]:
        criteria = PruneRequest(
            older_than_days=older_than_days,
            not_accessed_days=not_accessed_days,
            max_importance=max_importance,
            tags=tags or [],
            projects=projects or [],
            hierarchy_levels=hierarchy_levels or [],
            keep_latest=keep_latest,
        )
        result = service_of(ctx).prune_memories(criteria, dry_run, confirm)
        return answer(result, format_prune(result))
