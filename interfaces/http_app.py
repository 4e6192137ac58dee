"""The HTTP face of the MCP server: Streamable HTTP at /mcp, HTTP+SSE at /sse, bearer auth; the
web dashboard (``interfaces.dashboard``) at every other path, behind its own login and the same
Host/Origin rules."""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import logging
import socket
from collections.abc import AsyncIterator, Sequence

import anyio
from mcp.server.transport_security import (
    DEFAULT_MAX_REQUEST_BODY_SIZE,
    RequestBodyLimitMiddleware,
    TransportSecuritySettings,
)
from starlette.applications import Starlette
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from interfaces.dashboard import DashboardSource, create_dashboard
from interfaces.handshake import SessionFirstMiddleware
from interfaces.http_streams import MAX_STREAMS, StreamCapMiddleware
from interfaces.mcp_server import MemoryServer
from interfaces.stdio_lines import judge_body

__all__ = [
    "BearerTokenMiddleware",
    "HostHintMiddleware",
    "InsecureBindError",
    "MalformedMessageMiddleware",
    "check_bind",
    "create_dashboard_app",
    "create_http_app",
    "is_loopback",
    "own_addresses",
]

logger = logging.getLogger(__name__)

MCP_PATH = "/mcp"
SSE_PATH = "/sse"
MESSAGE_PATH = "/messages/"
# A body over this many bytes is judged in a worker thread, so other clients are served meanwhile.
_PARSED_IN_THREAD = 64 * 1024


class InsecureBindError(ValueError):
    """Serving beyond loopback without a token was asked for."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve beyond loopback without a bearer token."""
    if not is_loopback(host) and not token:
        raise InsecureBindError(
            f"Refusing to listen on {host} without authentication: anyone who can reach it could read "
            "and write your memories. Set MCP_AUTH_TOKEN (clients send `Authorization: Bearer <token>`), "
            "or listen on 127.0.0.1."
        )


class BearerTokenMiddleware:
    """Every HTTP request must carry ``Authorization: Bearer <token>``; otherwise 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        given = dict(scope["headers"]).get(b"authorization", b"")
        if hmac.compare_digest(given, self._expected):
            await self._app(scope, receive, send)
            return
        reason = "missing" if not given else "invalid"
        body = json.dumps(
            {
                "error": "unauthorized",
                "message": f"Bearer token {reason}: send `Authorization: Bearer <token>` "
                "(`memory_system token` prints it on the server's machine).",
            }
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="cognitive-memory"'),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _security(host: str, port: int, extra_hosts: Sequence[str]) -> TransportSecuritySettings:
    """DNS-rebinding protection stays on: only loopback names, the bound host (all of this
    machine's names and addresses when it listens on every interface) and listed hosts."""
    hosts = ["127.0.0.1", "localhost", "[::1]", *extra_hosts]
    if host in ("0.0.0.0", "::"):
        hosts += own_addresses()
    elif not is_loopback(host):
        hosts.append(host)
    allowed = [f"{name}:{port}" for name in hosts] + list(hosts)
    origins = [f"{scheme}://{entry}" for scheme in ("http", "https") for entry in allowed]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=allowed, allowed_origins=origins
    )


def own_addresses() -> list[str]:
    """This machine's host names and the addresses they and its default route resolve to (IPv6 in
    brackets, as a Host header writes them)."""
    names = {socket.gethostname(), socket.getfqdn()}
    addresses: set[str] = set()
    for name in names:
        with contextlib.suppress(OSError):
            addresses.update(str(info[4][0]) for info in socket.getaddrinfo(name, None))
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing address
        addresses.add(str(probe.getsockname()[0]))
    bracketed = {f"[{a.split('%')[0]}]" if ":" in a else a for a in addresses}
    return sorted(name for name in names | bracketed if name and not is_loopback(name.strip("[]")))


class HostHintMiddleware:
    """The SDK answers a Host it does not accept with a bare 421; say which setting accepts it."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
        rejected = False

        async def hinted(message: Message) -> None:
            nonlocal rejected
            if message["type"] == "http.response.start" and message["status"] == 421:
                rejected = True
                logger.warning("Refused a request for host %r: add it to MCP_ALLOWED_HOSTS", host)
                body = _host_hint(host)
                headers = [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ]
                await send({**message, "headers": headers})
                await send({"type": "http.response.body", "body": body})
            elif not rejected:
                await send(message)

        await self._app(scope, receive, hinted)


class MalformedMessageMiddleware:
    """A POSTed message gets what the same stdio line gets (``interfaces.stdio_lines``): a lone
    surrogate, too deep JSON and batches get 400 with a JSON-RPC error that says why (and the
    request's id when it can be read). Bodies are
    read whole: the SDK's size limit is applied before this (413 over ``max_body``)."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if (
            scope["type"] != "http"
            or scope["method"] != "POST"
            or not path.startswith((MCP_PATH, MESSAGE_PATH))
        ):
            await self._app(scope, receive, send)
            return
        body, last = await _whole_body(receive)
        verdict = None
        if last is None:
            # Parsing a large body takes a while; the parser lets other threads run meanwhile.
            large = len(body) > _PARSED_IN_THREAD
            verdict = await anyio.to_thread.run_sync(judge_body, body) if large else judge_body(body)
        if verdict is not None and verdict.message is None:
            content = verdict.errors[0].model_dump_json(by_alias=True, exclude_unset=True).encode()
            await _respond(send, 400, content)
            return
        if verdict is not None and verdict.message is not None:
            body = verdict.message.model_dump_json(by_alias=True, exclude_unset=True).encode()
            headers = [(k, v) for k, v in scope["headers"] if k != b"content-length"]
            scope = {**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
        replay: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]
        if last is not None:
            replay.append(last)

        async def replayed() -> Message:
            return replay.pop(0) if replay else await receive()

        await self._app(scope, replayed, send)


async def _whole_body(receive: Receive) -> tuple[bytes, Message | None]:
    """The request body, and the message that ended it early (a disconnect), if any."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), message
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks), None


async def _respond(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _host_hint(host: str) -> bytes:
    name = host[: host.rindex(":")] if ":" in host.rsplit("]", 1)[-1] else host  # without the port
    return json.dumps(
        {
            "error": "invalid_host",
            "message": f"Host {host!r} is not one this server answers (DNS-rebinding protection). "
            f"If it is this machine, start the server with MCP_ALLOWED_HOSTS={name} "
            "(comma-separated, names or addresses).",
        }
    ).encode()


def _by_path(mcp: ASGIApp, dashboard: ASGIApp) -> ASGIApp:
    """The MCP transports' paths (and the lifespan) to ``mcp``, every other path to ``dashboard``."""

    async def route(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        is_mcp = scope["type"] == "lifespan" or path.startswith((MCP_PATH, SSE_PATH, MESSAGE_PATH))
        await (mcp if is_mcp else dashboard)(scope, receive, send)

    return route


def _guarded_dashboard(
    source: DashboardSource, token: str | None, security: TransportSecuritySettings, login_code: str | None
) -> ASGIApp:
    app = create_dashboard(
        source.service, token=token, security=security, checks=source.checks, login_code=login_code
    )
    return HostHintMiddleware(RequestBodyLimitMiddleware(app, DEFAULT_MAX_REQUEST_BODY_SIZE))


def create_dashboard_app(
    source: DashboardSource,
    *,
    host: str,
    port: int,
    token: str | None,
    allowed_hosts: Sequence[str] = (),
    login_code: str | None = None,
) -> ASGIApp:
    """The dashboard alone (`memory_system ui`), under the same bind, Host and Origin rules;
    ``login_code``: the code of a one-time login link (``/login?once=CODE``)."""
    check_bind(host, token)
    return _guarded_dashboard(source, token, _security(host, port, allowed_hosts), login_code)


def create_http_app(
    server: MemoryServer,
    *,
    host: str,
    port: int,
    token: str | None,
    allowed_hosts: Sequence[str] = (),
    dashboard: DashboardSource | None = None,
    login_code: str | None = None,
    max_streams: int = MAX_STREAMS,
) -> ASGIApp:
    """One ASGI app serving both transports, wrapped in bearer auth when a token is set; with
    ``dashboard``, the dashboard at every other path (its login form or a one-time login link with
    ``login_code`` instead of the bearer header). At most ``max_streams`` SSE streams are open at
    once (``interfaces.http_streams``)."""
    check_bind(host, token)
    security = _security(host, port, allowed_hosts)
    streamable = server.streamable_http_app(
        streamable_http_path=MCP_PATH, transport_security=security, host=host
    )
    sse = server.sse_app(sse_path=SSE_PATH, message_path=MESSAGE_PATH, transport_security=security, host=host)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with server.session_manager.run():
            yield

    routes = Starlette(routes=[*streamable.routes, *sse.routes], lifespan=lifespan)
    sessions = SessionFirstMiddleware(routes, MCP_PATH)
    messages = RequestBodyLimitMiddleware(MalformedMessageMiddleware(sessions), DEFAULT_MAX_REQUEST_BODY_SIZE)
    app: ASGIApp = StreamCapMiddleware(HostHintMiddleware(messages), max_streams)
    mcp = BearerTokenMiddleware(app, token) if token else app
    if dashboard is None:
        return mcp
    return _by_path(mcp, _guarded_dashboard(dashboard, token, security, login_code))
