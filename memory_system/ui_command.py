"""`memory_system ui`: the web dashboard alone, on 127.0.0.1, for those whose MCP server runs over
stdio. `serve mcp --port` serves the same dashboard beside /mcp (``dashboard_source``)."""

from __future__ import annotations

import logging
import threading
import webbrowser
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Annotated, Any

import typer

from memory_system import serving

if TYPE_CHECKING:
    from cognitive_memory.settings import Settings
    from cognitive_memory.system import CognitiveSystem
    from interfaces.dashboard import DashboardSource

__all__ = ["DEFAULT_PORT", "HOST", "dashboard_source", "register"]

logger = logging.getLogger(__name__)

HOST = "127.0.0.1"
DEFAULT_PORT = 8765

SystemOpener = Callable[..., AbstractContextManager["CognitiveSystem"]]


def dashboard_source(system: CognitiveSystem, project: str | None) -> DashboardSource:
    """The dashboard's facade over ``system``, with doctor's read-only checks for its status page."""
    from interfaces.cli import CognitiveCLI
    from interfaces.dashboard import DashboardSource

    return DashboardSource(cli=CognitiveCLI(system, project=project), checks=lambda: _checks(system))


def _checks(system: CognitiveSystem) -> list[Any]:
    """Doctor's checks that read the serving system (not the round trip, which writes)."""
    from interfaces.dashboard import HealthCheck
    from memory_system import doctor_checks
    from memory_system.doctor_sources import check_loaded_sources

    results = [
        doctor_checks.check_vectors(system),
        doctor_checks.check_model(system),
        check_loaded_sources(system, False),
        doctor_checks.check_counts(system),
    ]
    return [HealthCheck(result.name, result.status, result.detail) for result in results]


def register(app: typer.Typer, open_system: SystemOpener, settings: Callable[[], Settings]) -> None:
    """Add ``ui`` to ``app``; ``open_system(settings, serving=True)`` opens the store as ``serve`` does."""

    @app.command("ui")
    def ui(
        port: Annotated[int, typer.Option(min=1, max=65535, help="Port on 127.0.0.1.")] = DEFAULT_PORT,
        open_browser: Annotated[
            bool, typer.Option("--open", help="Open the dashboard in a browser.")
        ] = False,
    ) -> None:
        """Serve the web dashboard on 127.0.0.1 (login with MCP_AUTH_TOKEN when it is set).
        Ctrl-C ends it with status 0."""
        serving.stop_on_signals()
        resolved = settings()
        listen = resolved.server
        logging.basicConfig(level=listen.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        token = listen.auth_token.get_secret_value() if listen.auth_token else None
        with open_system(resolved, serving=True) as system:
            source = dashboard_source(system, resolved.scope.project)
            _serve(source, port, token, listen.extra_hosts, open_browser)
        serving.exit_now(0)


def _serve(
    source: DashboardSource, port: int, token: str | None, extra_hosts: list[str], browse: bool
) -> None:
    from interfaces.http_app import create_dashboard_app

    app = create_dashboard_app(source, host=HOST, port=port, token=token, allowed_hosts=extra_hosts)
    url = f"http://{HOST}:{port}/"
    typer.echo(
        f"Dashboard on {url}{' (log in with MCP_AUTH_TOKEN)' if token else ''}; Ctrl-C stops it.", err=True
    )
    server = serving.uvicorn_server(app, HOST, port, lifespan="off")
    if browse:
        threading.Thread(target=_open_when_started, args=(server, url), daemon=True).start()
    server.run()


def _open_when_started(server: Any, url: str) -> None:
    """Open ``url`` once uvicorn listens (give up after 30 s: the URL is printed anyway)."""
    waiting = threading.Event()
    for _ in range(600):
        if server.started:
            webbrowser.open(url)
            return
        waiting.wait(0.05)
