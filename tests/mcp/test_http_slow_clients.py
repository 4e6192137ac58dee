"""Slowloris against `memory_system serve mcp --port`: connections that never finish their request
head are closed after the header timeout, and an authorised client is served meanwhile; a token
holder piling up SSE streams cannot lock other clients out either."""

from __future__ import annotations

import contextlib
import resource
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memory_system.http_limits import HEADER_TIMEOUT
from tests.mcp.test_http import (
    MEMORY_SYSTEM,
    TOKEN,
    free_port,
    server_env,
    spawn_http_server,
    wait_for_port,
)
from tests.mcp.test_stdio import INITIALIZE

DESCRIPTORS = 256  # the server's file descriptor limit: fewer than the half-open sockets
HALF_OPEN = 300
STREAMS = 600  # more than the connection cap (512)
ACCEPT = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {TOKEN}"}


def _limit_descriptors() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (DESCRIPTORS, DESCRIPTORS))


@pytest.fixture
def server_port(data_dir: Path) -> Iterator[int]:
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    process = subprocess.Popen(
        [str(MEMORY_SYSTEM), "serve", "mcp", "--port", str(port)],
        env=server_env(data_dir, MCP_AUTH_TOKEN=TOKEN),
        cwd=data_dir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=_limit_descriptors,
    )
    try:
        wait_for_port(port, process)
        yield port
    finally:
        process.kill()
        process.communicate()


@pytest.fixture
def unlimited_server_port(data_dir: Path) -> Iterator[int]:
    """A server with the usual descriptor limit, so its connection cap is the full 512."""
    port = free_port()
    process = spawn_http_server(data_dir, port, MCP_AUTH_TOKEN=TOKEN)
    try:
        yield port
    finally:
        process.kill()
        process.communicate()


def _half_open(port: int) -> socket.socket:
    """A connection that sends the start of a request and never finishes its head."""
    connection = socket.create_connection(("127.0.0.1", port), timeout=5)
    connection.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n")
    return connection


def _closed_by_server(connection: socket.socket, deadline: float) -> bool:
    connection.settimeout(max(0.1, deadline - time.monotonic()))
    try:
        return connection.recv(1024) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


@pytest.mark.subprocess
def test_half_open_connections_neither_starve_an_authorised_client_nor_stay_open(server_port: int) -> None:
    opened = time.monotonic()
    sockets = [_half_open(server_port) for _ in range(HALF_OPEN)]
    try:
        started = time.monotonic()
        response = httpx2.post(
            f"http://127.0.0.1:{server_port}/mcp",
            json=INITIALIZE,
            headers={"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {TOKEN}"},
            timeout=10,
        )
        answered_in = time.monotonic() - started
        deadline = opened + HEADER_TIMEOUT + 10
        still_open = sum(not _closed_by_server(connection, deadline) for connection in sockets)
    finally:
        for connection in sockets:
            with contextlib.suppress(OSError):
                connection.close()

    assert response.status_code == 200
    assert answered_in < 5
    assert still_open == 0


@pytest.mark.subprocess
def test_a_request_head_trickled_byte_by_byte_is_cut_off_at_the_header_timeout(server_port: int) -> None:
    head = b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100
    with socket.create_connection(("127.0.0.1", server_port), timeout=5) as connection:
        opened = time.monotonic()
        closed = False
        for byte in head:
            try:
                connection.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            if _closed_by_server(connection, time.monotonic() + 0.5):
                closed = True
                break
            if time.monotonic() - opened > HEADER_TIMEOUT + 5:
                break
        lasted = time.monotonic() - opened

    assert closed
    assert HEADER_TIMEOUT - 1 < lasted < HEADER_TIMEOUT + 3


def _open_stream(port: int) -> tuple[socket.socket, bytes]:
    """An authorised GET /sse whose stream is left open; the response head (empty if refused)."""
    connection = socket.create_connection(("127.0.0.1", port), timeout=5)
    connection.sendall(
        f"GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
        f"Authorization: Bearer {TOKEN}\r\n\r\n".encode()
    )
    received = b""
    with contextlib.suppress(OSError):
        while b"\r\n\r\n" not in received and (chunk := connection.recv(4096)):
            received += chunk
    return connection, received.partition(b"\r\n")[0]


def _stream_ended(connection: socket.socket, deadline: float) -> bool:
    """Whether the server ends the stream (the last chunk, or the connection closed) by ``deadline``."""
    received = b""
    while time.monotonic() < deadline:
        connection.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            chunk = connection.recv(4096)
        except TimeoutError:
            return False
        except ConnectionResetError:
            return True
        received += chunk
        if not chunk or received.endswith(b"0\r\n\r\n"):
            return True
    return False


async def _list_tools(port: int) -> set[str]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10) as http,
        Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client,
    ):
        return {tool.name for tool in (await client.list_tools()).tools}


@pytest.mark.subprocess
@pytest.mark.anyio
async def test_six_hundred_open_sse_streams_do_not_lock_a_new_client_out(unlimited_server_port: int) -> None:
    opened = [_open_stream(unlimited_server_port) for _ in range(STREAMS)]
    try:
        started = time.monotonic()
        initialized = httpx2.post(
            f"http://127.0.0.1:{unlimited_server_port}/mcp", json=INITIALIZE, headers=ACCEPT, timeout=10
        )
        answered_in = time.monotonic() - started
        with anyio.fail_after(10):
            tools = await _list_tools(unlimited_server_port)
        oldest_ended = _stream_ended(opened[0][0], time.monotonic() + 5)
        newest_ended = _stream_ended(opened[-1][0], time.monotonic() + 1)
    finally:
        for connection, _ in opened:
            with contextlib.suppress(OSError):
                connection.close()

    assert all(head.startswith(b"HTTP/1.1 200") for _, head in opened)
    assert initialized.status_code == 200
    assert answered_in < 1
    assert "recall_memories" in tools
    assert oldest_ended
    assert not newest_ended
