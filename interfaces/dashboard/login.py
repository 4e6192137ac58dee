"""Logging in and out: the login form, its POST, the one-time login link, logout.

The token is compared before the throttle is asked (``LoginThrottle``), so the right token always
logs in. A one-time link (``/login?once=CODE``, printed by the server or opened by `memory_system
ui --open`) logs a browser in without the token ever being in a URL; the code is spent at its
first use. Logging out ends the session on the server, not only in the browser.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from interfaces.dashboard.auth import Session
from interfaces.dashboard.gate import checked_form, cookie_header, local_target
from interfaces.dashboard.state import session_of, state_of

__all__ = ["login", "login_form", "logout"]

WRONG_TOKEN = "That is not the server's token (`memory_system token` prints it)."
SPENT_LINK = (
    "That login link was already used or has expired (it works once, for 10 minutes). "
    "Enter the token instead: `memory_system token` prints it."
)


async def login_form(request: Request) -> Response:
    """The login form; with ``?once=CODE``, the one-time login link."""
    state = state_of(request)
    code = request.query_params.get("once")
    if not state.keys.login_required:
        return RedirectResponse("/", status_code=303)
    if code is not None:
        return _redeem(request, code)
    if request.scope["state"]["logged_in"]:
        return RedirectResponse("/", status_code=303)
    return state.renderer.page(request, "login.html", {"next": "/", "error": None})


def _redeem(request: Request, code: str) -> Response:
    """A page that sets the logged-in cookie, then moves on to ``/`` (by a refresh, not a redirect:
    a browser sends a SameSite=Strict cookie only on navigations this site starts)."""
    state = state_of(request)
    if not state.keys.redeem_login_code(code):
        return state.renderer.page(request, "login.html", {"next": "/", "error": SPENT_LINK}, 401)
    session = state.keys.new_session(logged_in=True)
    response = state.renderer.page(request, "logged_in.html", {"next": "/"})
    _set_cookie(request, response, session)
    return response


async def login(request: Request) -> Response:
    """The server's token typed into the form starts a new, logged-in session."""
    state = state_of(request)
    form = await checked_form(request)
    target = local_target(form.get("next"))
    if state.keys.check_login(form.get("token", "")):
        state.throttle.succeeded()
        response = RedirectResponse(target, status_code=303)
        _set_cookie(request, response, state.keys.new_session(logged_in=True))
        return response
    wait = state.throttle.wait_seconds()
    if wait > 0:
        error = f"Too many wrong tokens: try again in {wait:.0f} s. {WRONG_TOKEN}"
        return state.renderer.page(request, "login.html", {"next": target, "error": error}, 429)
    state.throttle.failed()
    return state.renderer.page(request, "login.html", {"next": target, "error": WRONG_TOKEN}, 401)


async def logout(request: Request) -> Response:
    """End the session on the server and give the browser a new, logged-out one."""
    state = state_of(request)
    await checked_form(request)
    ending = session_of(request)
    if ending is not None:
        state.keys.end(ending)
    response = RedirectResponse("/", status_code=303)
    _set_cookie(request, response, state.keys.new_session(logged_in=False))
    return response


def _set_cookie(request: Request, response: Response, session: Session) -> None:
    value = state_of(request).keys.cookie_value(session)
    response.headers.append("set-cookie", cookie_header(session, value, request.url.scheme == "https"))
