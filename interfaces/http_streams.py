"""A cap on the open SSE streams (``GET /sse``, ``GET /mcp``), well below the connection cap.

A stream holds its connection for as long as the client keeps it, so a leaky or hostile token
holder could otherwise fill every connection the server takes and lock every other client out.
One stream more than the cap ends the oldest one instead of being refused: a client's forgotten
streams make room for a new client, so the server heals itself, and a client that still wants its
stream reconnects. The oldest stream is ended the way a client that goes away ends it (its
``receive`` reports ``http.disconnect``, so the SDK closes its session); its response is then
finished here with an SSE comment that says why.
"""

from __future__ import annotations

import logging
import time

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["MAX_STREAMS", "StreamCapMiddleware"]

logger = logging.getLogger(__name__)

MAX_STREAMS = 64
STREAM_PATHS = ("/sse", "/mcp")
_DISCONNECT: Message = {"type": "http.disconnect"}


class _Stream:
    """One streaming request: its ``receive`` reports a disconnect once it is evicted, and what the
    app sends after that is dropped (the middleware finishes the response)."""

    def __init__(self, receive: Receive, send: Send, client: object) -> None:
        self._receive = receive
        self._send = send
        self._waiting: anyio.CancelScope | None = None
        self.client = client
        self.opened = time.monotonic()
        self.started = False
        self.finished = False
        self.evicted = False

    async def receive(self) -> Message:
        if self.evicted:
            return _DISCONNECT
        with anyio.CancelScope() as self._waiting:
            return await self._receive()
        return _DISCONNECT  # cancelled by ``evict``

    async def send(self, message: Message) -> None:
        if self.evicted:
            return
        if message["type"] == "http.response.start":
            self.started = True
        elif message["type"] == "http.response.body" and not message.get("more_body", False):
            self.finished = True
        await self._send(message)

    @property
    def fresh(self) -> bool:
        """Neither answered nor evicted yet."""
        return not (self.started or self.evicted)

    def evict(self) -> None:
        self.evicted = True
        if self._waiting is not None:
            self._waiting.cancel()

    async def finish(self, note: bytes) -> None:
        """End an evicted stream's response if the app left it open (best effort: the peer may
        be gone)."""
        if self.started and not self.finished:
            self.finished = True
            with anyio.move_on_after(1):
                await self._send({"type": "http.response.body", "body": note, "more_body": False})


class StreamCapMiddleware:
    """At most ``limit`` SSE streams are open at once; a new one ends the oldest. A stream counts
    from its ``200`` response head until it ends, however it ends."""

    def __init__(self, app: ASGIApp, limit: int = MAX_STREAMS) -> None:
        if limit < 1:
            raise ValueError(f"the stream limit must be at least 1, not {limit}")
        self._app = app
        self.limit = limit
        self._open: dict[_Stream, None] = {}  # oldest first

    @property
    def open_streams(self) -> int:
        """How many streams are open now."""
        return len(self._open)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not _is_stream_request(scope):
            await self._app(scope, receive, send)
            return
        stream = _Stream(receive, send, scope.get("client"))

        async def counted(message: Message) -> None:
            # Once: after an eviction the SDK's SSE handler sends a second (dropped) response.
            if message["type"] == "http.response.start" and message["status"] == 200 and stream.fresh:
                self._admit(stream)
            await stream.send(message)

        try:
            await self._app(scope, stream.receive, counted)
        finally:
            self._open.pop(stream, None)
        if stream.evicted:
            await stream.finish(self._note())

    def _admit(self, stream: _Stream) -> None:
        while len(self._open) >= self.limit:
            oldest = next(iter(self._open))
            del self._open[oldest]
            oldest.evict()
            logger.info(
                "Stream limit (%d) reached: closed the oldest stream (from %s, open %.0f s)",
                self.limit,
                oldest.client,
                time.monotonic() - oldest.opened,
            )
        self._open[stream] = None

    def _note(self) -> bytes:
        return (
            f": closed: the server keeps at most {self.limit} streams open and this was the oldest; "
            "reconnect if you still need it\n\n"
        ).encode()


def _is_stream_request(scope: Scope) -> bool:
    return scope["type"] == "http" and scope["method"] == "GET" and scope.get("path", "") in STREAM_PATHS
