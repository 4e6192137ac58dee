"""The server side of the hook socket: a running server answers Claude Code hooks, so a hook
process need not load the encoder and open the store itself.

One JSON line in (``{"event", "payload", "max_chars", "project"}``, see ``HookRequest``), one JSON
line out (``{"stdout": ..., "note": ...}``, or ``{"error": ...}``), then the connection closes.
Each connection is served in a thread of its own, never on the MCP server's event loop; a bad
request is answered with an error, it never ends the listener. Only this user's processes (or
root's) are answered, as for the vector store's socket.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from cognitive_memory.errors import CognitiveMemoryError
from cognitive_memory.processes import accept_trusted, listen_privately
from interfaces.hooks import HookAnswer, HookRequest

__all__ = ["MAX_REQUEST_BYTES", "HookListener"]

logger = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 4 * 1024 * 1024
READ_SECONDS = 5.0  # a client that has not sent its whole request within this is dropped


class HookListener:
    """Answers hook requests on the Unix socket ``path`` with ``answer`` until ``close``."""

    def __init__(self, path: Path, answer: Callable[[HookRequest], HookAnswer]) -> None:
        self.path = path
        self._answer = answer
        # Named by this process's pid: a socket already there was left by a process that is gone.
        self._listener = listen_privately(path)
        self._closed = threading.Event()
        threading.Thread(target=self._accept, name="hook-listener", daemon=True).start()

    def _accept(self) -> None:
        accept_trusted(self._listener, self._closed, self._start, "the hook socket")

    def _start(self, connection: socket.socket) -> None:
        threading.Thread(target=self._serve, args=(connection,), name="hook", daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            try:
                line = _read_line(connection, time.monotonic() + READ_SECONDS)
            except (OSError, ValueError) as exc:
                logger.info("Hook request not read: %s", exc)
                return
            reply = self._reply(line)
            connection.settimeout(READ_SECONDS)  # a client that does not take its reply is dropped too
            with contextlib.suppress(OSError):
                connection.sendall(json.dumps(reply, ensure_ascii=False).encode() + b"\n")

    def _reply(self, line: bytes) -> dict[str, str | None]:
        try:
            message = json.loads(line)
        except ValueError as exc:
            return {"error": f"a hook request is one line of JSON: {exc}"}
        try:
            answer = self._answer(HookRequest.from_wire(message))
        except ValidationError as exc:  # a value the facade's request models refused
            return {"error": f"invalid hook input: {exc.errors()[0]['msg']}"}
        except CognitiveMemoryError as exc:
            return {"error": exc.message}
        except Exception:  # the thread's top-level handler: one bad hook must not end the listener
            logger.exception("Hook failed")
            return {"error": "the hook failed in the server; its log has the details"}
        return {"stdout": answer.stdout, "note": answer.note}

    def close(self) -> None:
        """Stop answering and remove the socket (the hook clients then look elsewhere)."""
        if self._closed.is_set():
            return
        self._closed.set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self.path.unlink(missing_ok=True)


def _read_line(connection: socket.socket, until: float) -> bytes:
    """One request line, read by ``until`` (TimeoutError past it, however the bytes trickle in);
    ValueError when it exceeds MAX_REQUEST_BYTES or the client hangs up first."""
    data = bytearray()
    while b"\n" not in data:
        left = until - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no whole request within {READ_SECONDS:g} s")
        connection.settimeout(left)
        chunk = connection.recv(65536)
        if not chunk:
            raise ValueError("the client closed the connection before a whole line")
        data.extend(chunk)
        if len(data) > MAX_REQUEST_BYTES:
            raise ValueError(f"request over {MAX_REQUEST_BYTES} bytes refused")
    return bytes(data.split(b"\n", 1)[0])
