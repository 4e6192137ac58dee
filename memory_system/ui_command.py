"""`memory_system ui`: the web dashboard alone, on 127.0.0.1, for those whose MCP server runs over
stdio. `serve mcp --port` serves the same dashboard beside /mcp (``dashboard_source``)."""

from __future__ import annotations

import contextlib
import html
import logging
import os
import threading
import webbrowser
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from memory_system import http_token, serving

if TYPE_CHECKING:
    from cognitive_memory.settings import Settings
    from cognitive_memory.system import CognitiveSystem
    from interfaces.dashboard import DashboardSource

__all__ = ["DEFAULT_PORT", "HOST", "LOGIN_PAGE", "dashboard_source", "register", "write_login_page"]

logger = logging.getLogger(__name__)

HOST = "127.0.0.1"
DEFAULT_PORT = 8765
LOGIN_PAGE = "dashboard-login.html"  # in the data directory while `ui --open` runs

SystemOpener = Callable[..., AbstractContextManager["CognitiveSystem"]]


def dashboard_source(system: CognitiveSystem, project: str | None) -> DashboardSource:
    """The dashboard's facade over ``system``, with doctor's read-only checks for its status page."""
    from cognitive_memory.service import MemoryService
    from interfaces.dashboard import DashboardSource

    return DashboardSource(service=MemoryService(system, project=project), checks=lambda: _checks(system))


def _checks(system: CognitiveSystem) -> list[Any]:
    """Doctor's checks that read the serving system (not the round trip, which writes)."""
    from cognitive_memory.upkeep import serving_checks
    from interfaces.dashboard import HealthCheck

    return [HealthCheck(result.name, result.status, result.detail) for result in serving_checks(system)]


def register(app: typer.Typer, open_system: SystemOpener, settings: Callable[[], Settings]) -> None:
    """Add ``ui`` to ``app``; ``open_system(settings, serving=True)`` opens the store as ``serve`` does."""

    @app.command("ui")
    def ui(
        port: Annotated[int, typer.Option(min=1, max=65535, help="Port on 127.0.0.1.")] = DEFAULT_PORT,
        open_browser: Annotated[
            bool, typer.Option("--open", help="Open the dashboard in a browser.")
        ] = False,
    ) -> None:
        """Serve the web dashboard on 127.0.0.1, behind a login with the server's token (`memory_system
        token`); a one-time login link is printed, and --open opens it. Ctrl-C ends it with status 0."""
        from cognitive_memory.errors import CognitiveMemoryError

        serving.stop_on_signals()
        resolved = settings()
        listen = resolved.server
        logging.basicConfig(level=listen.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        try:
            token = http_token.server_token(resolved)
        except CognitiveMemoryError as exc:
            typer.echo(f"Error: {exc.message}", err=True)
            raise typer.Exit(code=1) from None
        page = resolved.storage.data_dir.expanduser() / LOGIN_PAGE if open_browser else None
        with open_system(resolved, serving=True) as system:
            source = dashboard_source(system, resolved.scope.project)
            try:
                _serve(source, port, token, listen.extra_hosts, page)
            finally:
                if page is not None:
                    page.unlink(missing_ok=True)
        serving.exit_now(0)


def _serve(
    source: DashboardSource, port: int, token: str | None, extra_hosts: list[str], page: Path | None
) -> None:
    """Serve until Ctrl-C; with ``page`` (``--open``), open the dashboard logged in through it."""
    from interfaces.http_app import create_dashboard_app

    code, link = http_token.login_link(HOST, port) if token else (None, "")
    app = create_dashboard_app(
        source, host=HOST, port=port, token=token, allowed_hosts=extra_hosts, login_code=code
    )
    url = f"http://{HOST}:{port}/"
    typer.echo(f"Dashboard on {url}; Ctrl-C stops it.", err=True)
    if code is not None:
        typer.echo(http_token.login_notice(link), err=True)
    server = serving.uvicorn_server(app, HOST, port, lifespan="off")
    if page is not None:
        target = write_login_page(page, link) if code is not None else url
        threading.Thread(target=_open_when_started, args=(server, target), daemon=True).start()
    server.run()


def write_login_page(page: Path, link: str) -> str:
    """A page (mode 0600) that sends the browser on to ``link``; its ``file://`` URL. The browser
    opens this rather than ``link`` itself, so the one-time code never shows in the process list,
    where another user could spend it first (Jupyter does the same)."""
    page.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        page.unlink()
    target = html.escape(link, quote=True)
    content = (
        '<!doctype html>\n<meta charset="utf-8">\n<title>Cognitive Memory</title>\n'
        f'<meta http-equiv="refresh" content="0; url={target}">\n'
        f'<p><a href="{target}">Open the dashboard</a></p>\n'
    )
    descriptor = os.open(page, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(content)
    return page.resolve().as_uri()


def _open_when_started(server: Any, url: str) -> None:
    """Open ``url`` once uvicorn listens (give up after 30 s: the URL is printed anyway)."""
    waiting = threading.Event()
    for _ in range(600):
        if server.started:
            webbrowser.open(url)
            return
        waiting.wait(0.05)
