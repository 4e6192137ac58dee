"""The HTTP face of the MCP server: Streamable HTTP at /mcp, HTTP+SSE at /sse, bearer auth."""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
from collections.abc import AsyncIterator, Sequence

from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from interfaces.mcp_server import MemoryServer

__all__ = ["BearerTokenMiddleware", "InsecureBindError", "check_bind", "create_http_app", "is_loopback"]

MCP_PATH = "/mcp"
SSE_PATH = "/sse"
MESSAGE_PATH = "/messages/"


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
                "message": f"Bearer token {reason}: send `Authorization: Bearer <token>`.",
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
    """DNS-rebinding protection stays on: only loopback names, the bound host and listed hosts."""
    hosts = ["127.0.0.1", "localhost", "[::1]", *extra_hosts]
    if not is_loopback(host) and host not in ("0.0.0.0", "::"):
        hosts.append(host)
    allowed = [f"{name}:{port}" for name in hosts] + list(hosts)
    origins = [f"{scheme}://{entry}" for scheme in ("http", "https") for entry in allowed]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=allowed, allowed_origins=origins
    )


def create_http_app(
    server: MemoryServer, *, host: str, port: int, token: str | None, allowed_hosts: Sequence[str] = ()
) -> ASGIApp:
    """One ASGI app serving both transports, wrapped in bearer auth when a token is set."""
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

    app: ASGIApp = Starlette(routes=[*streamable.routes, *sse.routes], lifespan=lifespan)
    return BearerTokenMiddleware(app, token) if token else app
