"""The dashboard as an ASGI app: its routes over a ``MemoryService``, behind ``SessionGate``."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from cognitive_memory.errors import CognitiveMemoryError, InvalidInputError, NotFoundError
from cognitive_memory.service import MemoryService
from interfaces.dashboard import actions, login, pages
from interfaces.dashboard.auth import LoginThrottle, SessionKeys
from interfaces.dashboard.forms import FormError
from interfaces.dashboard.gate import CsrfError, SessionGate
from interfaces.dashboard.state import DashboardState, HealthChecks, state_of
from interfaces.dashboard.views import STATIC_DIR

__all__ = ["create_dashboard"]

logger = logging.getLogger(__name__)


def _error(request: Request, title: str, message: str, status: int) -> Response:
    return state_of(request).renderer.page(
        request, "error.html", {"title": title, "message": message}, status
    )


async def _on_form_error(request: Request, exc: Exception) -> Response:
    status = 403 if isinstance(exc, CsrfError) else 400
    title = "Refused" if isinstance(exc, CsrfError) else "Bad input"
    return _error(request, title, str(exc), status)


async def _on_memory_error(request: Request, exc: Exception) -> Response:
    status = 404 if isinstance(exc, NotFoundError) else 400 if isinstance(exc, InvalidInputError) else 503
    message = exc.message if isinstance(exc, CognitiveMemoryError) else str(exc)
    return _error(request, "Not done", message, status)


async def _on_http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    title = "Not found" if status == 404 else "Not allowed" if status == 405 else "Error"
    message = "There is no such page." if status == 404 else str(getattr(exc, "detail", ""))
    return _error(request, title, message, status)


async def _on_crash(request: Request, exc: Exception) -> Response:
    logger.error("Dashboard request %s %s failed", request.method, request.url.path, exc_info=exc)
    return _error(request, "Something went wrong", "The server logged the details; nothing was lost.", 500)


def _routes() -> list[Route | Mount]:
    return [
        Route("/", pages.search, name="home"),
        Route("/search", pages.search),
        Route("/memories", pages.browse),
        Route("/memories/{memory_id}", pages.memory_page),
        Route("/memories/{memory_id}/forget", pages.forget_confirm),
        Route("/memories/{memory_id}/forget", actions.forget, methods=["POST"]),
        Route("/memories/{memory_id}/edit", actions.edit, methods=["POST"]),
        Route("/memories/{memory_id}/link", actions.link, methods=["POST"]),
        Route("/memories/{memory_id}/unlink", actions.unlink, methods=["POST"]),
        Route("/graph/{memory_id}", pages.graph_page),
        Route("/graph/{memory_id}/data", pages.graph_data),
        Route("/status", pages.status_page),
        Route("/trash", pages.trash_page),
        Route("/trash/restore", actions.restore, methods=["POST"]),
        Route("/login", login.login_form),
        Route("/login", login.login, methods=["POST"]),
        Route("/logout", login.logout, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
    ]


def create_dashboard(
    service: MemoryService,
    *,
    token: str | None,
    security: TransportSecuritySettings | None,
    checks: HealthChecks | None = None,
    login_code: str | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> ASGIApp:
    """The dashboard over ``service``: login with ``token`` when set, ``security``'s Host/Origin rules
    (None: no check, for tests only), ``checks`` run on the status page (doctor's, on this system).
    ``login_code`` is the code of a one-time login link (``/login?once=CODE``); ``clock`` is the
    login throttle's."""
    keys = SessionKeys(token, login_code=login_code)
    state = DashboardState(service=service, keys=keys, checks=checks, throttle=LoginThrottle(clock))
    app = Starlette(
        routes=_routes(),
        exception_handlers={
            FormError: _on_form_error,
            CognitiveMemoryError: _on_memory_error,
            HTTPException: _on_http_error,
            Exception: _on_crash,
        },
    )
    app.state.dashboard = state
    return SessionGate(app, state, security)
