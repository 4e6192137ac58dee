"""The cap on open SSE streams, driven as ASGI in process: which stream a new one ends, how every
way a stream ends frees its place, and that the SDK closes the session of a stream it ended."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

import anyio
import pytest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cognitive_memory.system import CognitiveSystem
from interfaces.http_app import create_http_app
from interfaces.http_streams import StreamCapMiddleware
from interfaces.mcp_server import create_server

TOKEN = "stream-cap-test-token"
PORT = 8000


class FakeClient:
    """One HTTP request's client side: records what the server sends, disconnects when told."""

    def __init__(self, method: str = "GET", path: str = "/sse", body: bytes = b"") -> None:
        self.scope: Scope = {
            "type": "http",
            "method": method,
            "path": path,
            "query_string": b"",
            "headers": [
                (b"host", f"127.0.0.1:{PORT}".encode()),
                (b"authorization", f"Bearer {TOKEN}".encode()),
            ],
            "client": ("127.0.0.1", 50000),
        }
        self.sent: list[Message] = []
        self.gone = anyio.Event()
        self._request: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive(self) -> Message:
        """The request body, as a server delivers it, then a disconnect once ``gone``."""
        if self._request:
            return self._request.pop()
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        self.sent.append(message)

    @property
    def body(self) -> bytes:
        return b"".join(m.get("body", b"") for m in self.sent if m["type"] == "http.response.body")

    @property
    def ended(self) -> bool:
        return any(m["type"] == "http.response.body" and not m.get("more_body") for m in self.sent)


async def endless_stream(scope: Scope, receive: Receive, send: Send) -> None:
    """What the SDK's SSE responses do: stream until the client goes, then return unfinished."""
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]}
    )
    await send({"type": "http.response.body", "body": b"event: hello\n\n", "more_body": True})
    while (await receive())["type"] != "http.disconnect":
        pass


async def open_streams(group: anyio.abc.TaskGroup, app: ASGIApp, count: int) -> list[FakeClient]:
    """``count`` streams opened one after another, each once the previous one sent its first event
    (polled under the caller's deadline)."""
    clients = [FakeClient() for _ in range(count)]
    for client in clients:
        group.start_soon(app, client.scope, client.receive, client.send)
        while not client.body:
            await anyio.sleep(0.01)
        await anyio.wait_all_tasks_blocked()
    return clients


@pytest.mark.anyio
async def test_a_stream_beyond_the_cap_ends_the_oldest_and_says_why() -> None:
    cap = StreamCapMiddleware(endless_stream, limit=2)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            first, second, third = await open_streams(group, cap, 3)
            assert first.ended
            assert b"at most 2 streams open" in first.body
            assert not second.ended
            assert not third.ended
            assert cap.open_streams == 2

            (fourth,) = await open_streams(group, cap, 1)
            assert second.ended
            assert not third.ended
            assert not fourth.ended
            group.cancel_scope.cancel()


def _client_goes(client: FakeClient, ending: anyio.Event) -> None:
    client.gone.set()


def _server_ends(client: FakeClient, ending: anyio.Event) -> None:
    ending.set()


@pytest.mark.anyio
@pytest.mark.parametrize("end", [_client_goes, _server_ends])
@pytest.mark.parametrize("raises", [False, True])
async def test_a_stream_that_ends_no_longer_counts(
    end: Callable[[FakeClient, anyio.Event], None], raises: bool
) -> None:
    ending = anyio.Event()

    async def stream_until_ended(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        async with anyio.create_task_group() as group:
            group.start_soon(_cancel_when, group, receive_disconnect(receive))
            await ending.wait()
            group.cancel_scope.cancel()
        if raises:
            raise RuntimeError("the stream failed")

    cap = StreamCapMiddleware(stream_until_ended, limit=2)
    client = FakeClient()
    failures: list[BaseException] = []
    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(_recording(failures, cap), client.scope, client.receive, client.send)
            await anyio.wait_all_tasks_blocked()
            assert cap.open_streams == 1
            end(client, ending)
    assert cap.open_streams == 0
    assert len(failures) == int(raises)


async def receive_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _cancel_when(group: anyio.abc.TaskGroup, awaitable: Awaitable[None]) -> None:
    await awaitable
    group.cancel_scope.cancel()


def _recording(
    failures: list[BaseException], app: ASGIApp
) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    async def run(scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await app(scope, receive, send)
        except RuntimeError as failure:
            failures.append(failure)

    return run


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("method", "path", "status"), [("POST", "/mcp", 200), ("GET", "/", 200), ("GET", "/mcp", 400)]
)
async def test_only_answered_sse_requests_count_as_streams(method: str, path: str, status: int) -> None:
    async def hanging(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": status, "headers": []})
        await receive_disconnect(receive)

    cap = StreamCapMiddleware(hanging, limit=1)
    clients = [FakeClient(method, path) for _ in range(3)]
    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            for client in clients:
                group.start_soon(cap, client.scope, client.receive, client.send)
            await anyio.wait_all_tasks_blocked()
            assert cap.open_streams == 0
            assert not any(client.ended for client in clients)
            group.cancel_scope.cancel()


def test_a_cap_below_one_stream_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        StreamCapMiddleware(endless_stream, limit=0)


async def _post_message(app: ASGIApp, session_id: str) -> int:
    ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    client = FakeClient("POST", "/messages/", ping)
    client.scope["query_string"] = f"session_id={session_id}".encode()
    client.scope["headers"] += [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(ping)).encode()),
    ]
    await app(client.scope, client.receive, client.send)
    return int(client.sent[0]["status"])


def _session_id(client: FakeClient) -> str:
    return client.body.split(b"session_id=")[1].split(b"\r\n")[0].decode()


@pytest.mark.anyio
async def test_the_sdk_closes_the_session_of_an_sse_stream_the_cap_ended(
    hash_system: CognitiveSystem,
) -> None:
    app = create_http_app(create_server(hash_system), host="127.0.0.1", port=PORT, token=TOKEN, max_streams=1)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            older, newer = await open_streams(group, app, 2)
            assert older.ended
            assert await _post_message(app, _session_id(older)) == 404
            assert await _post_message(app, _session_id(newer)) == 202
            assert not newer.ended
            newer.gone.set()
