"""The MCP server: a factory, a typed lifespan, thin tools and one error translation."""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from importlib import metadata
from typing import Any, Literal

from mcp import MCPError
from mcp.server import MCPServer
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.server.mcpserver import server as mcpserver_module
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.logging import configure_logging as configure_sdk_logging
from mcp.server.stdio import stdio_server
from mcp.types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    CallToolResult,
    GetPromptResult,
    InputRequiredResult,
    TextContent,
)
from mcp.types import Resource as MCPResource
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from cognitive_memory.errors import CognitiveMemoryError
from cognitive_memory.service import ErrorResult, MemoryService
from cognitive_memory.system import CognitiveSystem
from interfaces import mcp_prompts, mcp_resources
from interfaces.handshake import handshake_first
from interfaces.mcp_tools import ServerState, register_tools
from interfaces.mcp_tools.arguments import closed, instead_of, names_at
from interfaces.stdio_lines import MAX_NAMES, AnsweringBadLines, StdinLines, claimed_stdin, crowded

__all__ = ["SERVER_NAME", "MemoryServer", "create_server", "error_result"]

logger = logging.getLogger(__name__)

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
SERVER_NAME = "cognitive-memory"
INSTRUCTIONS = (
    "Cognitive Memory is your long-term memory across sessions. Call recall_memories at the start of "
    "a task and whenever earlier context could help; call store_memory for facts, decisions and "
    "experiences worth keeping; call session_lessons before a session ends to record what a future "
    "session (which will remember nothing) needs to know. When a remembered fact changed, correct it "
    "with update_memory (or store the new one and link_memories it with relation 'supersedes'); "
    "get_memories opens memories by id. Memories are scoped to the current project; store what holds "
    "everywhere with project 'global'."
)

# A refusal lists this many problems, then how many more; a name or message is cut to this many
# characters: an answer to a bad request stays small whatever the request holds.
SHOWN_PROBLEMS = 10
_SHOWN_CHARS = 120

_VALIDATION_CODES = {
    "missing": "missing_field",
    "string_too_long": "text_too_long",
    "string_too_short": "empty_text",
    "too_long": "too_many_items",
    "literal_error": "invalid_value",
    "enum": "invalid_value",
    "value_error": "invalid_value",
    "extra_forbidden": "unknown_field",
    "invalid_metadata": "invalid_metadata",
    "metadata_too_large": "metadata_too_large",
    "greater_than": "out_of_range",
    "greater_than_equal": "out_of_range",
    "less_than": "out_of_range",
    "less_than_equal": "out_of_range",
}


def _configure_logging_unless_configured(level: LogLevel = "INFO") -> None:
    """The SDK's ``configure_logging``, which every ``MCPServer`` calls, left out where the root
    logger has handlers already, as the ``logging.basicConfig`` it ends in leaves itself out: it
    imports rich first (a large part of a stdio server's imports before its handshake) to make
    a handler that is then dropped. Where the root logger has none, the SDK's runs as before."""
    if not logging.getLogger().handlers:
        configure_sdk_logging(level)


# The SDK has no way to leave its logging out; its module's name is what MCPServer calls.
mcpserver_module.configure_logging = _configure_logging_unless_configured  # type: ignore[attr-defined]  # not in its __all__


def error_result(code: str, message: str) -> CallToolResult:
    """An ``isError`` tool result whose text is the JSON ``{"success": false, "error", "message"}``.

    The body travels as text, not as structured content: clients (the TypeScript SDK among them)
    validate any structured content against the tool's output schema, error results included.
    """
    body = ErrorResult(error=code, message=message)
    return CallToolResult(content=[TextContent(type="text", text=body.model_dump_json())], is_error=True)


def _describe_validation(
    tool: str, exc: ValidationError, arguments: type[BaseModel] | None = None
) -> tuple[str, str]:
    """The code and message of refused arguments: the first ``SHOWN_PROBLEMS`` problems, then how
    many more, so the answer stays small whatever was sent. With the ``arguments`` model, the first
    unknown name of each object lists the names taken there."""
    errors = exc.errors(include_input=False, include_url=False)
    code = _VALIDATION_CODES.get(errors[0]["type"], "invalid_type")
    named: set[tuple[int | str, ...]] = set()
    found = [_problem(tool, err, arguments, named) for err in errors[:SHOWN_PROBLEMS]]
    if len(errors) > SHOWN_PROBLEMS:
        found.append(f"and {len(errors) - SHOWN_PROBLEMS:,} more")
    # A problem given as a sentence keeps its own full stop; the joined list gets one.
    listed = "; ".join(found).rstrip(".")
    return code, f"Invalid arguments for {tool}: {listed}. Nothing was stored or changed."


def _problem(
    tool: str, err: ErrorDetails, arguments: type[BaseModel] | None, named: set[tuple[int | str, ...]]
) -> str:
    where = _place(err["loc"]) or "arguments"
    parent = tuple(err["loc"][:-1])
    message = err["msg"].removeprefix("Value error, ")[:_SHOWN_CHARS]
    if err["type"] != "extra_forbidden" or arguments is None:
        return f"`{where}`: {message}"
    kind = "unknown field" if parent else "unknown argument"
    use = instead_of(arguments, parent, str(err["loc"][-1]))
    if use:
        kind += f"; use `{_place((*parent, use))}`"
    names = None if parent in named else names_at(arguments, parent)
    named.add(parent)
    if names is None:
        return f"`{where}`: {kind}"
    if parent:
        return f"`{where}`: {kind}; `{_place(parent)}` takes {', '.join(names)}"
    return f"`{where}`: {kind}; {tool} takes {', '.join(names)}"


def _place(loc: Sequence[int | str]) -> str:
    """A place in the arguments as ``filters.tags.0``, each name cut to ``_SHOWN_CHARS``."""
    return ".".join(str(part)[:_SHOWN_CHARS] for part in loc)


def _crowded(tool: str, place: Sequence[int | str], size: int, arguments: type[BaseModel] | None) -> str:
    """Why arguments holding an object of ``size`` names at ``place`` are refused unread."""
    where = f"`{_place(place)}` holds" if place else "the arguments hold"
    names = names_at(arguments, place) if arguments else None
    taken = f" (`{_place(place) or tool}` takes {', '.join(names)})" if names else ""
    return (
        f"Invalid arguments for {tool}: {where} {size:,} names; no object of a tool's arguments takes "
        f"more than {MAX_NAMES}{taken}. Nothing was stored or changed."
    )


def _describe(tool: str, exc: ToolError, arguments: type[BaseModel] | None) -> tuple[str, str]:
    cause = exc.__cause__
    if isinstance(cause, ValidationError):
        return _describe_validation(tool, cause, arguments)
    if isinstance(cause, CognitiveMemoryError):
        return cause.code, cause.message
    if isinstance(exc, UnexpectedToolError):
        return (
            "internal_error",
            f"{tool} failed unexpectedly; the server logged the details and keeps serving.",
        )
    text = str(exc)
    if text.startswith("Unknown tool"):
        return "unknown_tool", f"{text}. Call tools/list for the tools this server offers."
    return "tool_error", text


def _prompt_error(name: str, exc: ValueError) -> MCPError:
    """The SDK's failure of a prompt as a protocol error that says what was wrong: it wraps its own
    refusals (unknown prompt, missing argument) once, and the prompt's failures twice."""
    refusal = exc.__cause__ or exc
    cause = refusal.__cause__
    if cause is None:
        known = "; prompts/list names the prompts" if str(refusal).startswith("Unknown prompt") else ""
        return MCPError(INVALID_PARAMS, f"{refusal}{known}.")
    if isinstance(cause, ValidationError):
        return MCPError(INVALID_PARAMS, _describe_validation(f"prompt {name}", cause)[1])
    logger.error("Prompt %r crashed", name, exc_info=cause)
    return MCPError(INTERNAL_ERROR, f"Prompt {name} failed unexpectedly; the server logged the details.")


class MemoryServer(MCPServer[ServerState]):
    """MCPServer whose tool failures always carry the structured error body."""

    async def list_resources(self) -> list[MCPResource]:
        """The registered resources and the project lists, which are templates (see mcp_resources)."""
        return [*await super().list_resources(), *mcp_resources.LISTED]

    async def get_prompt(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        context: Context[ServerState, Any] | None = None,
    ) -> GetPromptResult | InputRequiredResult:
        try:
            return await super().get_prompt(name, arguments, context)
        except MCPError:
            raise
        except ValueError as exc:
            raise _prompt_error(name, exc) from exc

    async def run_stdio_async(self) -> None:
        """Serve over stdio, as the SDK does, answering lines that are not JSON-RPC messages (and
        requests without a usable id, which the SDK would take for notifications)."""
        with claimed_stdin() as wire:
            stdin = StdinLines(wire)
            async with stdio_server(stdin=stdin) as (read_stream, transport_writes):
                write_stream = stdin.answer_on(transport_writes)
                lowlevel = self._lowlevel_server  # the SDK's own run_stdio_async drives it the same way
                await lowlevel.run(
                    AnsweringBadLines(read_stream, write_stream),
                    write_stream,
                    lowlevel.create_initialization_options(),
                )

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[ServerState, Any] | None = None
    ) -> Any:
        tool = self._tool_manager.get_tool(name)  # the SDK has no public way to read a Tool
        model = tool.fn_metadata.arg_model if tool else None
        found = crowded(arguments) if tool else None
        if found is not None:
            logger.info("Tool %r refused: an object of %d names", name, found[1])
            return error_result("too_many_fields", _crowded(name, *found, model))
        try:
            return await super().call_tool(name, arguments, context)
        except MCPError:
            raise
        except ToolError as exc:
            code, message = _describe(name, exc, model)
            if code == "internal_error":
                logger.error("Tool %r crashed", name, exc_info=exc.__cause__ or exc)
            else:
                logger.info("Tool %r refused: %s", name, code)
            return error_result(code, message)


def create_server(
    system: CognitiveSystem,
    *,
    session_id: str | None = None,
    max_results: int = 50,
    project: str | None = None,
) -> MemoryServer:
    """Build the server over ``system``; ``max_results`` caps recall_memories' max_results.
    ``project`` is the server's project; without one, each client's roots choose (else default)."""
    service = MemoryService(system, session_id, project)

    @asynccontextmanager
    async def lifespan(_: MCPServer[ServerState]) -> AsyncIterator[ServerState]:
        service.warm_up()
        yield ServerState(service=service)

    server = MemoryServer(
        SERVER_NAME,
        version=_version(),
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        tools=list(_tools(max_results)),
    )
    middleware = server._lowlevel_server.middleware  # noqa: SLF001 - no public hook
    middleware += [_opening_index_after_first_answer(service), handshake_first()]
    mcp_prompts.register(server)
    mcp_resources.register(server)
    return server


def _opening_index_after_first_answer(service: MemoryService) -> ServerMiddleware[Any]:
    """Middleware that opens the vector index in the background once the first message (the
    handshake, mostly) is answered: the embedded shard of a large store takes a while to load,
    and the first recall then finds it loaded, or loading beside the model."""
    answered = False

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        nonlocal answered
        result = await call_next(ctx)
        if not answered:
            answered = True
            service.open_index()
        return result

    return middleware


@functools.cache
def _tools(max_results: int) -> tuple[Tool, ...]:
    """The tools, built once per ``max_results`` and closed to unknown arguments: the SDK derives
    each tool's schemas from its signature (the dearest part of a server), and a tool reaches its
    server only through a call's context, so servers can share them."""
    shelf = MCPServer[ServerState]("tools")
    register_tools(shelf, max_results=max_results)
    # the SDK has no public way to read its Tool objects
    return tuple(closed(tool) for tool in shelf._tool_manager.list_tools())


def _version() -> str:
    """The installed package's version, for the handshake's serverInfo."""
    try:
        return metadata.version("cognitive-memory")
    except metadata.PackageNotFoundError:
        return "0+unknown"
