"""Slowloris against `memory_system serve mcp --port`: connections that never finish their request
head are closed after the header timeout, and an authorised client is served meanwhile."""

from __future__ import annotations

import contextlib
import resource
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from memory_system.http_limits import HEADER_TIMEOUT
from tests.mcp.test_http import MEMORY_SYSTEM, TOKEN, free_port, server_env, wait_for_port
from tests.mcp.test_stdio import INITIALIZE

DESCRIPTORS = 256  # the server's file descriptor limit: fewer than the half-open sockets
HALF_OPEN = 300


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
