"""snapshot_memories: snapshot the memory database by name, or list the snapshots; restoring is
a shell command, which each answer gives.

No `from __future__ import annotations` in the tool modules: the SDK reads the annotations."""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations

from cognitive_memory.service import SnapshotName, SnapshotResult, format_snapshots
from interfaces.mcp_tools.state import ServerState, answer, off_loop, service_of

__all__ = ["register"]

DESCRIPTION = (
    "Snapshot the whole memory (safe while in use), optionally named, or with list: true list the "
    "snapshots; each with the shell command that restores it (servers stopped)."
)


def register(server: MCPServer[ServerState]) -> None:
    @server.tool(
        name="snapshot_memories",
        title="Snapshot memories",
        description=DESCRIPTION,
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
        ),
    )
    async def snapshot_memories(
        ctx: Context[ServerState, Any],
        name: SnapshotName | None = None,
        list: bool = False,  # the published argument name, shadowing the builtin in here only
    ) -> Annotated[CallToolResult, SnapshotResult]:
        service = service_of(ctx)
        # Copying and checking a large database takes seconds: a worker thread does it.
        result = await off_loop(lambda: service.snapshot_memories(name, list_them=list))
        return answer(result, format_snapshots(result))
