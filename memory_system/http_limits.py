"""uvicorn's HTTP/1.1 protocol with the limits a slowloris needs: header and idle deadlines and a
connection cap that evicts the oldest idle connection rather than refusing a new one.

uvicorn only times out a connection that is idle *after* a response (``timeout_keep_alive``, and
any byte cancels even that); a connection that never finishes its request head is kept forever,
so a few hundred of them exhaust the file descriptors. Here:

- the request head must be complete within ``HEADER_TIMEOUT`` seconds of the connection opening
  (or of the previous response ending), however slowly its bytes trickle in;
- a request body must not stall for ``BODY_IDLE_TIMEOUT`` seconds;
- at most ``limit`` connections are open; one more closes the connection that has waited longest
  for a request head (an idle or half-open one), so clients that send whole requests are served
  while someone holds sockets open. Streams (SSE, a request being answered) are never evicted
  here; the HTTP app caps the SSE streams at ``stream_limit()``, a quarter of the connections at
  most (``interfaces.http_streams``), so streams cannot fill the connections either.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from interfaces.http_streams import MAX_STREAMS

__all__ = ["BODY_IDLE_TIMEOUT", "HEADER_TIMEOUT", "GuardedH11Protocol", "connection_limit", "stream_limit"]

logger = logging.getLogger(__name__)

HEADER_TIMEOUT = 10.0
BODY_IDLE_TIMEOUT = 30.0
MAX_CONNECTIONS = 512
# Descriptors kept for the store, the model, logs and the listening socket.
RESERVED_DESCRIPTORS = 64


def connection_limit() -> int:
    """``MAX_CONNECTIONS``, or less when the process may not open that many descriptors."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(8, min(MAX_CONNECTIONS, (soft - RESERVED_DESCRIPTORS) // 2))


def stream_limit() -> int:
    """``MAX_STREAMS``, or a quarter of ``connection_limit()`` when that is less."""
    return max(1, min(MAX_STREAMS, connection_limit() // 4))


class GuardedH11Protocol(H11Protocol):
    """``H11Protocol`` with a request-head deadline, a body idle deadline and a connection cap."""

    limit = MAX_CONNECTIONS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._waiting_since: float | None = None  # waiting for a request head since (monotonic)
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # as uvicorn's
        super().connection_made(transport)
        open_now = sum(1 for other in self.connections if not _closing(other))
        if open_now > self.limit and not self._evict_oldest_waiting():
            logger.warning("Refused a connection: %d are open and none is idle", open_now - 1)
            transport.close()
            return
        self._await_head()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        state = self.conn.their_state
        if state is h11.IDLE or self.transport.is_closing():
            return  # still waiting for the head: its deadline runs on
        self._waiting_since = None
        if state is h11.SEND_BODY:
            self._arm(BODY_IDLE_TIMEOUT, "its request body stalled")
        else:
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._waiting_since = None
        super().connection_lost(exc)

    def _await_head(self) -> None:
        self._waiting_since = time.monotonic()
        self._arm(HEADER_TIMEOUT, "it did not send a complete request head")

    def _arm(self, seconds: float, reason: str) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._expire, reason)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self, reason: str) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            logger.info("Closed a connection from %s: %s in time", self.client, reason)
            self.transport.close()

    def _evict_oldest_waiting(self) -> bool:
        waiting = [
            other
            for other in self.connections
            if isinstance(other, GuardedH11Protocol)
            and other is not self
            and other._waiting_since is not None
            and not _closing(other)
        ]
        if not waiting:
            return False
        oldest = min(waiting, key=lambda other: other._waiting_since or 0.0)
        oldest._waiting_since = None
        oldest._disarm()
        oldest.transport.close()
        logger.info("Connection limit (%d) reached: closed the longest idle connection", self.limit)
        return True


def _closing(protocol: object) -> bool:
    transport = getattr(protocol, "transport", None)
    return transport is None or bool(transport.is_closing())
