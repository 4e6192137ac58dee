"""A request sent before the ``initialize`` handshake gets an answer that says to send it first.

The SDK serves a 2025-era connection (one whose requests carry no 2026-07-28 ``_meta`` envelope)
only after ``initialize`` (or ``notifications/initialized``); ``ping`` and methods it does not
serve (-32601) pass its gate. Everything else it refuses with -32602 "Invalid request parameters"
and empty data: the one-line smoke test (``echo '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' |
memory_system serve mcp``) learns nothing from that. Over HTTP its transport answers a request
without ``Mcp-Session-Id`` with 400 "Bad Request: Missing session ID" and an unknown session with
404 "Session not found", both with id null.

Only those refusals are reworded; when the SDK refuses stays its own choice, so 2026-07-28 clients
(no handshake) and stateless HTTP are served as before. The code is -32600 Invalid Request, which
the SDK itself gives the HTTP form of the same mistake and a request of the wrong protocol era:
the request is not acceptable in the connection's state, while its parameters may be fine. -32002
(LSP's "server not initialized") is reserved by MCP, which once used it for a missing resource.
"""

from __future__ import annotations

from typing import Any

import pydantic_core
from mcp import MCPError
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.types import INVALID_PARAMS, INVALID_REQUEST, ErrorData, JSONRPCError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["SessionFirstMiddleware", "before_initialize", "handshake_first"]

# The SDK's refusals, matched by their text so that nothing else is reworded.
_GATE_MESSAGE = "Invalid request parameters"
_NO_SESSION = "Bad Request: Missing session ID"
_UNKNOWN_SESSION = "Session not found"
_SESSION_HEADER = b"mcp-session-id"
_SHOWN_CHARS = 120


def before_initialize(method: str) -> str:
    """The message for a request of ``method`` sent before ``initialize``."""
    method = method[:_SHOWN_CHARS]
    return (
        f"Invalid Request: {method} was sent before initialize. Send the handshake first: the "
        f"initialize request, then the notifications/initialized notification, then {method}."
    )


def handshake_first() -> ServerMiddleware[Any]:
    """Middleware that rewords the SDK's refusal of a request before ``initialize``: -32600 with a
    message naming ``initialize`` instead of -32602 with no reason. The id stays the request's, and
    the connection goes on: a later ``initialize`` is served."""

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        try:
            return await call_next(ctx)
        except MCPError as exc:
            if not _refused_before_initialize(exc, ctx):
                raise
            raise MCPError(INVALID_REQUEST, before_initialize(ctx.method)) from None

    return middleware


def _refused_before_initialize(exc: MCPError, ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether ``exc`` is the SDK's initialization gate: its shape, on a connection that has not
    sent ``initialize``."""
    error = exc.error
    shape = (error.code, error.message, error.data) == (INVALID_PARAMS, _GATE_MESSAGE, "")
    return shape and ctx.session.client_params is None


class SessionFirstMiddleware:
    """At ``path``, the SDK's 400 for a request without a session and 404 for an unknown session
    keep their status and code, and gain the request's id and a message saying to send
    ``initialize``; the 400 loses the ``Mcp-Session-Id`` header of the session the SDK opened for
    the request and discarded at once."""

    def __init__(self, app: ASGIApp, path: str) -> None:
        self._app = app
        self._path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope.get("path", "").startswith(self._path):
            await self._app(scope, receive, send)
            return
        chunks: list[bytes] = []  # the request body, as the app reads it
        held: list[Message] = []  # a refusal's messages, until its body is whole

        async def teed() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                chunks.append(message.get("body", b""))
            return message

        async def answered(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] in (400, 404):
                held.append(message)
            elif not held:
                await send(message)
            else:
                held.append(message)
                if not message.get("more_body", False):
                    for reply in _reworded(held, b"".join(chunks), scope["method"]):
                        await send(reply)
                    held.clear()

        await self._app(scope, teed, answered)


def _reworded(held: list[Message], request: bytes, verb: str) -> list[Message]:
    """The refusal ``held`` (its start, then its body) as sent, or reworded when it is one of the
    SDK's session refusals."""
    start, body = held[0], b"".join(message.get("body", b"") for message in held[1:])
    try:
        said = pydantic_core.from_json(body)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return held
    if said not in (_NO_SESSION, _UNKNOWN_SESSION):
        return held
    method, request_id = _request_of(request)
    message = _session_message(said, method if verb == "POST" and request_id is not None else None)
    error = JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=INVALID_REQUEST, message=message))
    content = error.model_dump_json(by_alias=True, exclude_unset=True).encode()
    dropped = (_SESSION_HEADER, b"content-length")
    headers = [(name, value) for name, value in start["headers"] if name.lower() not in dropped]
    headers.append((b"content-length", str(len(content)).encode()))
    return [{**start, "headers": headers}, {"type": "http.response.body", "body": content}]


def _session_message(said: str, method: str | None) -> str:
    """What to say instead of the SDK's ``said``, to a POSTed request of ``method`` (if any)."""
    if said == _UNKNOWN_SESSION:
        return (
            "Session not found: the Mcp-Session-Id header names no open session (it was closed, timed "
            "out, or the server restarted). POST initialize without the header to open a new one."
        )
    if method is None:
        return (
            "Bad Request: no Mcp-Session-Id header. POST initialize first; send the Mcp-Session-Id "
            "header its answer carries with every later request."
        )
    method = method[:_SHOWN_CHARS]
    return (
        f"Invalid Request: {method} was sent before initialize. POST initialize first (without an "
        f"Mcp-Session-Id header), then notifications/initialized and {method}, each with the "
        "Mcp-Session-Id header that initialize's answer carries."
    )


def _request_of(body: bytes) -> tuple[str | None, str | int | None]:
    """The method and id of the JSON-RPC request ``body``, where it holds them."""
    try:
        value = pydantic_core.from_json(body)
    except ValueError:
        return None, None
    if not isinstance(value, dict) or not isinstance(value.get("method"), str):
        return None, None
    request_id = value.get("id")
    usable = isinstance(request_id, str | int) and not isinstance(request_id, bool)
    return value["method"], request_id if usable else None
