"""What the lifespan hands every tool."""

from __future__ import annotations

import logging
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
from mcp import MCPError
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, ValidationError

from cognitive_memory.core.validation import check_session
from cognitive_memory.errors import InvalidInputError
from cognitive_memory.service import MemoryService
from interfaces.roots import project_of_root

__all__ = [
    "ROOTS_TIMEOUT_SECONDS",
    "ServerState",
    "answer",
    "call_project",
    "call_session",
    "service_of",
    "off_loop",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")

# How long a tool call waits for the client to list its roots (asked once per connection).
ROOTS_TIMEOUT_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class ServerState:
    service: MemoryService
    # The project each client connection's roots stand for (None: no usable roots).
    roots: weakref.WeakKeyDictionary[object, str | None] = field(default_factory=weakref.WeakKeyDictionary)


def service_of(ctx: Context[ServerState, Any]) -> MemoryService:
    """The MemoryService of the running server."""
    return ctx.request_context.lifespan_context.service


def answer(result: BaseModel, text: str) -> CallToolResult:
    """A tool answer: the formatted text for people, the model as structured content without its
    null fields (a field that says nothing is left out; dictionaries such as a memory's metadata
    are the caller's and keep theirs)."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=result.model_dump(mode="json", exclude_none=True),
    )


async def off_loop(call: Callable[[], T]) -> T:
    """Run a blocking facade call in a worker thread, as the SDK does for sync tools."""
    return await anyio.to_thread.run_sync(call)


async def call_project(ctx: Context[ServerState, Any], given: str | None) -> str | None:
    """The project of a tool call: its own argument, else None when the server has one (the
    facade applies it), else the client's roots (asked once per connection), else None."""
    if given or service_of(ctx).project:
        return given
    session = ctx.request_context.session
    capabilities = session.client_capabilities
    if capabilities is None or capabilities.roots is None or not session.can_send_request:
        return None  # no roots offered, or a stateless request that cannot ask for them
    state = ctx.request_context.lifespan_context
    connection = session._connection  # the stable per-client key: sessions are built per request
    if connection not in state.roots:
        state.roots[connection] = await _roots_project(session)
    return state.roots[connection]


def call_session(ctx: Context[ServerState, Any]) -> str | None:
    """The session of a tool call: the transport's (an HTTP client's ``Mcp-Session-Id``), else None
    (stdio, stateless HTTP), for which the server's own stands (one per process)."""
    connection = getattr(ctx.request_context.session, "_connection", None)
    session = getattr(connection, "session_id", None)
    try:
        return check_session(session) if isinstance(session, str) else None
    except InvalidInputError:
        return None


async def _roots_project(session: Any) -> str | None:
    try:
        with anyio.fail_after(ROOTS_TIMEOUT_SECONDS), warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            listed = await session.list_roots()
    except (MCPError, ValidationError, TimeoutError) as exc:
        logger.info("The client did not list its roots (%s); using the default project", exc)
        return None
    project = next((p for root in listed.roots if (p := project_of_root(str(root.uri)))), None)
    logger.info("Project from the client's roots: %s", project)
    return project
