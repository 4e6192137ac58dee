"""The dashboard's front door: Host/Origin rules, the session cookie, the login wall, CSRF, headers.

Every request passes the same DNS-rebinding rules as /mcp (a foreign Host is refused with 421, a
foreign Origin with 403), then gets its session from the signed cookie (a new one when it has
none). Without a logged-in session only the login form and the static files answer. Every
answer carries the security headers (strict CSP among them).
"""

from __future__ import annotations

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from interfaces.dashboard.auth import COOKIE_NAME, SESSION_SECONDS, Session
from interfaces.dashboard.forms import FormError, read_form
from interfaces.dashboard.state import DashboardState, session_of, state_of
from interfaces.dashboard.views import SECURITY_HEADERS

__all__ = ["CsrfError", "SessionGate", "checked_form", "cookie_header", "local_target"]

OPEN_PREFIXES = ("/static/", "/login")


class CsrfError(FormError):
    """A POST without the CSRF token of its session."""


def cookie_header(session: Session, value: str, secure: bool) -> str:
    flags = f"; Path=/; HttpOnly; SameSite=Strict; Max-Age={SESSION_SECONDS}"
    return f"{COOKIE_NAME}={value}{flags}{'; Secure' if secure else ''}"


def local_target(target: str | None) -> str:
    """Where to go after logging in: a path of this site only (never ``//host`` or a URL)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


async def checked_form(request: Request) -> dict[str, str]:
    """The POSTed form, refused (``CsrfError``) unless it carries its session's CSRF token."""
    form = await read_form(request)
    if not state_of(request).keys.check_csrf(session_of(request), form.get("csrf")):
        raise CsrfError(
            "This form was refused: its security token is missing or belongs to another session. "
            "Reload the page and submit it again."
        )
    return form


class SessionGate:
    """Applies the rules of the module docstring around the dashboard's routes."""

    def __init__(
        self, app: ASGIApp, state: DashboardState, security: TransportSecuritySettings | None
    ) -> None:
        self._app = app
        self._state = state
        self._security = TransportSecurityMiddleware(security) if security is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        request = Request(scope, receive)
        refused = await self._security.validate_request(request) if self._security else None
        if refused is not None:
            await refused(scope, receive, _with_headers(send, None))
            return
        keys = self._state.keys
        session = keys.read_cookie(request.cookies.get(COOKIE_NAME))
        fresh = session is None
        session = session or keys.new_session(logged_in=False)
        scope.setdefault("state", {}).update(
            session=session,
            csrf=keys.csrf_token(session),
            logged_in=session.logged_in,
            login_required=keys.login_required,
        )
        cookie = (
            cookie_header(session, keys.cookie_value(session), scope["scheme"] == "https") if fresh else None
        )
        guarded = _with_headers(send, cookie)
        if session.logged_in or scope["path"].startswith(OPEN_PREFIXES):
            await self._app(scope, receive, guarded)
            return
        await self._login_wall(request)(scope, receive, guarded)

    def _login_wall(self, request: Request) -> Response:
        if request.method not in ("GET", "HEAD"):
            return self._state.renderer.page(
                request, "error.html", {"title": "Log in first", "message": "Log in, then try again."}, 401
            )
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        context = {"next": local_target(target), "error": None}
        return self._state.renderer.page(request, "login.html", context, 401)


def _with_headers(send: Send, cookie: str | None) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            for name, value in SECURITY_HEADERS.items():
                headers[name] = value
            already = any(v.startswith(f"{COOKIE_NAME}=") for v in headers.getlist("set-cookie"))
            if cookie is not None and not already:
                headers.append("set-cookie", cookie)
        await send(message)

    return sending
