"""The dashboard's sessions, CSRF tokens, one-time login links and login throttle.

Every visitor holds a signed session cookie (HttpOnly, SameSite=Strict, HMAC-SHA256 under a random
per-process key). It names a random session id and whether the session logged in; with no token
(``MCP_HTTP_AUTH=off``, loopback only) every session counts as logged in. A logged-in session is
also recorded on the server until it expires or logs out, so a cookie kept after logout is
refused, signature or not. Each form carries the CSRF token of its session, an HMAC of the session
id, checked in constant time on every POST. Logging in starts a new session id, so a cookie
planted before the login is worth nothing after it. The key and the sessions live in memory only:
a restart ends every session.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "COOKIE_NAME",
    "LINK_SECONDS",
    "SESSION_SECONDS",
    "LoginThrottle",
    "Session",
    "SessionKeys",
]

logger = logging.getLogger(__name__)

COOKIE_NAME = "cm_session"
SESSION_SECONDS = 12 * 3600
LINK_SECONDS = 10 * 60  # a one-time login link is worth this long, once
# Wrong tokens allowed in a row before each further one is answered with a wait (2, 4, 8... 60 s).
FREE_FAILURES = 5
MAX_WAIT_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class Session:
    """A verified session: its id, whether it logged in, and when it ends (epoch seconds)."""

    id: str
    logged_in: bool
    expires: int


class SessionKeys:
    """Signs and checks session cookies and CSRF tokens; compares the login token; keeps the
    logged-in sessions and the one-time login links of this process."""

    def __init__(
        self,
        token: str | None,
        key: bytes | None = None,
        *,
        login_code: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._key = key or secrets.token_bytes(32)
        self._token = token.encode() if token else None
        self._clock = clock
        self._lock = threading.Lock()
        self._live: dict[str, int] = {}  # logged-in session id -> when it ends
        self._codes: dict[str, float] = {}  # one-time login code -> when it stops working
        if login_code and token:
            self._codes[login_code] = clock() + LINK_SECONDS

    @property
    def login_required(self) -> bool:
        """True when the server has a token: pages need a logged-in session."""
        return self._token is not None

    def check_login(self, given: str) -> bool:
        """The token typed into the login form is the server's (constant-time)."""
        if self._token is None:
            return True
        return hmac.compare_digest(given.encode(), self._token)

    def redeem_login_code(self, given: str) -> bool:
        """True once for a one-time login code that has not expired; it is spent either way."""
        with self._lock:
            for code, until in list(self._codes.items()):
                if hmac.compare_digest(given.encode(), code.encode()):
                    del self._codes[code]
                    return until >= self._clock()
        return False

    def new_session(self, logged_in: bool, now: float | None = None) -> Session:
        when = now if now is not None else self._clock()
        session = Session(
            secrets.token_urlsafe(18), logged_in or not self.login_required, int(when) + SESSION_SECONDS
        )
        if logged_in and self.login_required:
            with self._lock:
                self._live = {sid: end for sid, end in self._live.items() if end >= when}
                self._live[session.id] = session.expires
        return session

    def end(self, session: Session) -> None:
        """Log ``session`` out on the server: its cookie no longer counts as logged in."""
        with self._lock:
            self._live.pop(session.id, None)

    def cookie_value(self, session: Session) -> str:
        body = f"{session.id}.{int(session.logged_in)}.{session.expires}"
        return f"{body}.{self._sign('session', body)}"

    def read_cookie(self, value: str | None, now: float | None = None) -> Session | None:
        """The session a cookie holds, or None when it is absent, forged, malformed or expired. A
        cookie of a session that logged out reads as not logged in."""
        if not value or value.count(".") != 3:
            return None
        body, signature = value.rsplit(".", 1)
        if not hmac.compare_digest(signature, self._sign("session", body)):
            return None
        session_id, logged_in, expires = body.split(".")
        if not expires.isdigit() or int(expires) < (now if now is not None else self._clock()):
            return None
        return Session(session_id, self._is_logged_in(session_id, logged_in == "1"), int(expires))

    def _is_logged_in(self, session_id: str, claimed: bool) -> bool:
        if not self.login_required:
            return True
        with self._lock:
            return claimed and session_id in self._live

    def csrf_token(self, session: Session) -> str:
        return self._sign("csrf", session.id)

    def check_csrf(self, session: Session | None, given: str | None) -> bool:
        """The form's CSRF token belongs to this session (constant-time)."""
        if session is None or not given:
            return False
        return hmac.compare_digest(given, self.csrf_token(session))

    def _sign(self, purpose: str, message: str) -> str:
        return hmac.new(self._key, f"{purpose}|{message}".encode(), hashlib.sha256).hexdigest()


class LoginThrottle:
    """Slows guessing by hand: after ``FREE_FAILURES`` wrong tokens in a row, wrong tokens are
    refused with "try again in" for 2, 4, 8... (at most ``MAX_WAIT_SECONDS``) seconds after each
    further one, and a warning is logged. The token is compared first, so the right token always
    logs in however many wrong ones are posted; against a program, the token's length is what
    counts (``/mcp`` has no throttle)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._until = 0.0

    def wait_seconds(self) -> float:
        """How long wrong tokens are refused without being counted (0: not throttled)."""
        with self._lock:
            return max(0.0, self._until - self._clock())

    def failed(self) -> None:
        with self._lock:
            self._failures += 1
            if self._failures > FREE_FAILURES:
                wait = min(MAX_WAIT_SECONDS, 2.0 ** (self._failures - FREE_FAILURES))
                self._until = self._clock() + wait
            failures = self._failures
        if failures == FREE_FAILURES + 1 or failures % 100 == 0:
            logger.warning("%d wrong dashboard tokens in a row: someone may be guessing it", failures)

    def succeeded(self) -> None:
        with self._lock:
            self._failures, self._until = 0, 0.0
