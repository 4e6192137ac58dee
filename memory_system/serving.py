"""Running `serve mcp`: stdio or HTTP, and how SIGINT and SIGTERM end it (status 0, no traceback).

In stdio mode the SDK reads stdin in a worker thread that only more input or end-of-file wakes,
and the event loop waits for that thread when it shuts down: an interrupted event loop would
leave the server answering on. So a signal ends a stdio server from a helper thread: it waits
(at most ``GRACE_SECONDS``) for what ``on_stop`` registered (the bookkeeping writes of the last
recall; the vector index's socket taken away), then ends the process. Nothing acknowledged is
lost: a memory is acknowledged only after SQLite committed it, and the vector outbox replays
what the index had not confirmed.
Before a server runs, a signal ends the process at once (SQLite's migrations are transactions).
The HTTP server handles the signals itself (uvicorn finishes open requests, then returns).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any, Literal

__all__ = [
    "GRACE_SECONDS",
    "ending_with_exit_now",
    "ends_with_exit_now",
    "exit_now",
    "on_stop",
    "serve_http",
    "serve_stdio",
    "stop_on_signals",
    "uvicorn_server",
]

logger = logging.getLogger(__name__)

GRACE_SECONDS = 2.0
_stopping = threading.Event()
_on_stop: list[Callable[[], object]] = []
_ending_with_exit_now = False


def stop_on_signals() -> None:
    """From now on SIGINT and SIGTERM end the process with status 0 (see the module docstring)."""
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)


def on_stop(callback: Callable[[], object]) -> None:
    """Run ``callback`` (at most ``GRACE_SECONDS``) when a signal ends the server."""
    _on_stop.append(callback)


def _stop(signum: int, frame: FrameType | None) -> None:
    if _stopping.is_set():
        return
    _stopping.set()
    logger.info("%s received: stopping", signal.Signals(signum).name)
    threading.Thread(target=_wind_down, name="stop", daemon=True).start()


def _wind_down() -> None:
    for callback in _on_stop:
        worker = threading.Thread(target=callback, daemon=True)
        worker.start()
        worker.join(GRACE_SECONDS)
    exit_now(0)


def ends_with_exit_now() -> None:
    """This process is the console script: it ends with ``exit_now``, after its system is closed.
    A system opened from now on flushes its vector shard at close but leaves it to the kernel,
    so the shard's files stay in the page cache for the next process
    (``cognitive_memory.main.keep_shards_until_exit``)."""
    global _ending_with_exit_now
    _ending_with_exit_now = True


def ending_with_exit_now() -> bool:
    """Whether ``ends_with_exit_now`` was called in this process."""
    return _ending_with_exit_now


def exit_now(code: int = 0) -> None:
    """End the process at once with ``code``, logs and standard streams flushed. Also the normal
    end of `serve mcp`: it skips the interpreter's teardown, which aborts ("terminate called
    without an active exception") while a native encoder thread still runs."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def serve_stdio(server: Any) -> None:
    """Serve until stdin closes, SIGINT or SIGTERM."""
    server.run()


def serve_http(
    server: Any, host: str, port: int, token: str | None, extra_hosts: list[str], dashboard: Any = None
) -> None:
    """Run uvicorn until SIGINT or SIGTERM; it finishes open requests before returning. With
    ``dashboard`` (a ``DashboardSource``) the web dashboard is served at ``/`` too, and a one-time
    login link for it is printed on stderr when there is a token."""
    import typer

    from interfaces.http_app import create_http_app
    from memory_system.http_limits import stream_limit
    from memory_system.http_token import login_link, login_notice

    code, url = login_link(host, port) if token and dashboard is not None else (None, "")
    app = create_http_app(
        server,
        host=host,
        port=port,
        token=token,
        allowed_hosts=extra_hosts,
        dashboard=dashboard,
        login_code=code,
        max_streams=stream_limit(),
    )
    logger.info(
        "Serving MCP on http://%s:%d/mcp (Streamable HTTP) and /sse (HTTP+SSE)%s%s",
        host,
        port,
        " with bearer auth" if token else "",
        ", the dashboard at /" if dashboard is not None else "",
    )
    if token is None:
        logger.warning("MCP_HTTP_AUTH=off: every local user of this machine can read and change memories")
    if code is not None:
        typer.echo(login_notice(url), err=True)

    uvicorn_server(app, host, port).run()


def uvicorn_server(app: Any, host: str, port: int, *, lifespan: Literal["on", "off"] = "on") -> Any:
    """A uvicorn server for ``app`` with the connection limits of ``http_limits`` (slow or idle
    clients), whose shutdown ends in a clean return: uvicorn re-raises the stopping signal after
    its graceful shutdown, which would kill the process before the memory system is closed."""
    import uvicorn

    from memory_system.http_limits import GuardedH11Protocol, connection_limit

    class CleanStop(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            with super().capture_signals():
                yield
                self._captured_signals.clear()

    protocol = type("Protocol", (GuardedH11Protocol,), {"limit": connection_limit()})
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan=lifespan,
        http=protocol,
        timeout_keep_alive=5,
        h11_max_incomplete_event_size=16 * 1024,
    )
    return CleanStop(config)
