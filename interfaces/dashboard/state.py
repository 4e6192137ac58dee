"""What the dashboard's handlers share: the facade, the session keys, the renderer, the checks."""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, ParamSpec, TypeVar

import anyio.to_thread
from starlette.requests import Request

from cognitive_memory.service import MemoryService
from interfaces.dashboard.auth import LoginThrottle, Session, SessionKeys
from interfaces.dashboard.views import Renderer

__all__ = [
    "DashboardSource",
    "DashboardState",
    "HealthCheck",
    "HealthChecks",
    "Notices",
    "blocking",
    "session_of",
    "state_of",
]

P = ParamSpec("P")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class HealthCheck:
    """One line of what ``memory_system doctor`` checks, run on the serving system."""

    name: str
    status: Literal["ok", "warn", "fail", "skip"]
    detail: str


HealthChecks = Callable[[], Sequence[HealthCheck]]


@dataclass(frozen=True, slots=True)
class DashboardSource:
    """What a server needs to serve the dashboard: the facade, and doctor's checks if any."""

    service: MemoryService
    checks: HealthChecks | None = None


class Notices:
    """The message a change leaves for the next page its session opens ("Updated ..."), kept here
    rather than in the URL, so no link can make the dashboard say what its author wants."""

    LIMIT = 1000  # sessions with a notice waiting; the oldest is dropped beyond

    def __init__(self) -> None:
        self._waiting: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, session_id: str, text: str) -> None:
        with self._lock:
            self._waiting.pop(session_id, None)
            self._waiting[session_id] = text
            while len(self._waiting) > self.LIMIT:
                self._waiting.popitem(last=False)

    def take(self, session_id: str) -> str | None:
        with self._lock:
            return self._waiting.pop(session_id, None)


@dataclass
class DashboardState:
    """The facade the pages read and change memories through, and how they are served."""

    service: MemoryService
    keys: SessionKeys
    checks: HealthChecks | None = None
    renderer: Renderer = field(default_factory=Renderer)
    throttle: LoginThrottle = field(default_factory=LoginThrottle)
    notices: Notices = field(default_factory=Notices)


def state_of(request: Request) -> DashboardState:
    state: DashboardState = request.app.state.dashboard
    return state


def session_of(request: Request) -> Session | None:
    session: Session | None = request.scope.get("state", {}).get("session")
    return session


async def blocking(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run a blocking facade call in a worker thread, off the event loop."""
    return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))
