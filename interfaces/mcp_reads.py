"""What the MCP prompts and resources share: the project of a request and facade calls off the
event loop, with the core's errors as protocol errors (prompts and resources have no error result)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from mcp import MCPError
from mcp.server.mcpserver import Context
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS

from cognitive_memory.core.memory import SourceKind
from cognitive_memory.errors import CognitiveMemoryError, InvalidInputError
from cognitive_memory.service import RecallFilters
from interfaces.mcp_tools.state import ServerState, call_project, off_loop, service_of

__all__ = ["LESSONS", "current_project", "facade_call"]

# list_memories' filter for the session lessons.
LESSONS = RecallFilters(sources=[SourceKind.SESSION_LESSON])

T = TypeVar("T")


async def current_project(ctx: Context[ServerState, Any]) -> str:
    """The project the tools of this connection work in (the server's, the client's roots, else
    ``default``)."""
    return service_of(ctx).scope(await call_project(ctx, None))


async def facade_call(call: Callable[[], T]) -> T:
    """Run a blocking facade call in a worker thread; a refusal of the core becomes an
    invalid-params error and a storage or encoder failure an internal error, each with its message."""
    try:
        return await off_loop(call)
    except InvalidInputError as exc:
        raise MCPError(INVALID_PARAMS, exc.message) from exc
    except CognitiveMemoryError as exc:
        raise MCPError(INTERNAL_ERROR, exc.message) from exc
