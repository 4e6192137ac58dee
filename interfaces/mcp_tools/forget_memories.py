"""forget_memories: remove memories that are wrong, outdated or unwanted.

No `from __future__ import annotations` in the tool modules: the SDK reads the annotations."""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from cognitive_memory.service import ForgetResult, format_forget
from interfaces.mcp_tools.state import ServerState, answer, service_of

__all__ = ["MAX_IDS", "register"]

MAX_IDS = 100

DESCRIPTION = (
    "Forget memories by id (the ids recall_memories and store_memory return): use it when a memory "
    "is wrong, outdated or unwanted. The memories leave recall, listing and the index at once and go "
    "to the trash, where restore_memories brings them back until it is "
    "purged (COGNITIVE_MEMORY_TRASH_DAYS, 30 by default). Ids that do not "
    "exist are reported as missing. Memories loaded from markdown files or git history are kept, "
    "with the reason: change their file, or remove it with `memory_system remove-file`."
)


def register(server: MCPServer[ServerState]) -> None:
    @server.tool(
        name="forget_memories",
        title="Forget memories",
        description=DESCRIPTION,
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
        ),
    )
    def forget_memories(
        memory_ids: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=100)]],
            Field(min_length=1, max_length=MAX_IDS, description="The ids of the memories to forget."),
        ],
        ctx: Context[ServerState, Any],
    ) -> Annotated[CallToolResult, ForgetResult]:
        result = service_of(ctx).forget_memories(memory_ids)
        return answer(result, format_forget(result))
