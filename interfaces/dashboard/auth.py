"""The dashboard's session cookie and CSRF tokens: HMAC-SHA256 under a random per-process key.

Every visitor holds a signed session cookie (HttpOnly, SameSite=Strict). It names a random
session id and whether the session logged in; with no ``MCP_AUTH_TOKEN`` (loopback only) every
session counts as logged in. Each form carries the CSRF token of its session, an HMAC of the
session id, checked in constant time on every POST. Logging in starts a new session id, so a
cookie planted before the login is worth nothing after it. The key lives in memory only: a
restart ends every session.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from dataclasses import dataclass

__all__ = ["COOKIE_NAME", "SESSION_SECONDS", "LoginThrottle", "Session", "SessionKeys"]

COOKIE_NAME = "cm_session"
SESSION_SECONDS = 12 * 3600
# Wrong tokens allowed in a row before each further attempt must wait (2, 4, 8... up to 60 s).
FREE_FAILURES = 5
MAX_WAIT_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class Session:
    """A verified session: its id, whether it logged in, and when it ends (epoch seconds)."""

    id: str
    logged_in: bool
    expires: int


class SessionKeys:
    """Signs and checks session cookies and CSRF tokens; compares the login token."""

    def __init__(self, token: str | None, key: bytes | None = None) -> None:
        self._key = key or secrets.token_bytes(32)
        self._token = token.encode() if token else None

    @property
    def login_required(self) -> bool:
        """True when MCP_AUTH_TOKEN is set: pages need a logged-in session."""
        return self._token is not None

    def check_login(self, given: str) -> bool:
        """The token typed into the login form is MCP_AUTH_TOKEN (constant-time)."""
        if self._token is None:
            return True
        return hmac.compare_digest(given.encode(), self._token)

    def new_session(self, logged_in: bool, now: float | None = None) -> Session:
        expires = int(now if now is not None else time.time()) + SESSION_SECONDS
        return Session(secrets.token_urlsafe(18), logged_in or not self.login_required, expires)

    def cookie_value(self, session: Session) -> str:
        body = f"{session.id}.{int(session.logged_in)}.{session.expires}"
        return f"{body}.{self._sign('session', body)}"

    def read_cookie(self, value: str | None, now: float | None = None) -> Session | None:
        """The session a cookie holds, or None when it is absent, forged, malformed or expired."""
        if not value or value.count(".") != 3:
            return None
        body, signature = value.rsplit(".", 1)
        if not hmac.compare_digest(signature, self._sign("session", body)):
            return None
        session_id, logged_in, expires = body.split(".")
        if not expires.isdigit() or int(expires) < (now if now is not None else time.time()):
            return None
        return Session(session_id, logged_in == "1" or not self.login_required, int(expires))

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
    """Slows guessing: after ``FREE_FAILURES`` wrong tokens in a row, login waits 2, 4, 8... (at
    most ``MAX_WAIT_SECONDS``) seconds after each further one. Per process, not per client: a
    guesser can delay the owner's login by a minute at most, and never reads a memory."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failures = 0
        self._until = 0.0

    def wait_seconds(self, now: float | None = None) -> float:
        """How long until a login may be tried (0: now)."""
        with self._lock:
            return max(0.0, self._until - (now if now is not None else time.monotonic()))

    def failed(self, now: float | None = None) -> None:
        with self._lock:
            self._failures += 1
            if self._failures > FREE_FAILURES:
                wait = min(MAX_WAIT_SECONDS, 2.0 ** (self._failures - FREE_FAILURES))
                self._until = (now if now is not None else time.monotonic()) + wait

    def succeeded(self) -> None:
        with self._lock:
            self._failures, self._until = 0, 0.0
