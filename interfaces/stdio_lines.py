"""A stdio line that is not a JSON-RPC message gets an answer (JSON-RPC 2.0 section 5.1).

The SDK's stdio reader hands such a line to the server as an exception, which the server only
logs: the client never hears of it and may wait forever. This read stream answers it with
-32700 (not JSON) or -32600 (JSON, but not a request), with ``id: null`` since none can be read.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

from mcp.shared.message import SessionMessage
from mcp.types import ErrorData, JSONRPCError
from pydantic import ValidationError

__all__ = ["PARSE_ERROR", "INVALID_REQUEST", "AnsweringBadLines", "bad_line_error"]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def bad_line_error(problem: Exception) -> JSONRPCError:
    """The answer to a line the transport could not read as a JSON-RPC message."""
    not_json = isinstance(problem, ValidationError) and any(
        error["type"] == "json_invalid" for error in problem.errors(include_url=False)
    )
    if not_json:
        error = ErrorData(code=PARSE_ERROR, message="Parse error: the line is not JSON.")
    else:
        error = ErrorData(
            code=INVALID_REQUEST, message="Invalid Request: the line is JSON but not a JSON-RPC 2.0 message."
        )
    return JSONRPCError(jsonrpc="2.0", id=None, error=error)


class AnsweringBadLines:
    """Wraps the transport's read stream: messages pass, bad lines are answered on ``write``."""

    def __init__(self, inner: Any, write: Any) -> None:
        self._inner = inner
        self._write = write

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            await self._answer(item)

    async def _answer(self, problem: Exception) -> None:
        await self._write.send(SessionMessage(bad_line_error(problem)))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> AnsweringBadLines:
        return self

    async def __anext__(self) -> Any:
        while True:
            item = await self._inner.__anext__()
            if not isinstance(item, Exception):
                return item
            await self._answer(item)

    async def __aenter__(self) -> AnsweringBadLines:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.aclose()
