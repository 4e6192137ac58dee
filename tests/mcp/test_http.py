"""`memory_system serve mcp --port` as a subprocess: both HTTP transports, bearer auth, clean stops."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from tests.mcp.test_stdio import INITIALIZE
from tests.mcp.tools import TOOL_NAMES

# Every test here starts `memory_system serve` (the module's server starts before the tier guard looks).
pytestmark = pytest.mark.subprocess

MEMORY_SYSTEM = Path(sys.executable).with_name("memory_system")
TOKEN = "correct-horse-battery-staple"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """A clean environment for a server in ``data_dir``; ``PYTHONPATH`` is kept so that a server
    started from a worktree runs that worktree's code, not the checkout the venv was installed from."""
    kept = {name: os.environ[name] for name in ("PYTHONPATH",) if name in os.environ}
    return {
        "PATH": os.environ["PATH"],
        **kept,
        "HOME": str(data_dir),
        "COGNITIVE_MEMORY_DATA_DIR": str(data_dir),
        **extra,
    }


def wait_for_port(port: int, process: subprocess.Popen[bytes], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited early with {process.returncode}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"server did not listen on {port} within {seconds} s")


def spawn_http_server(
    data_dir: Path, port: int, *, by_option: bool = True, stderr: int = subprocess.DEVNULL, **env: str
) -> subprocess.Popen[bytes]:
    """`serve mcp` over HTTP on ``port`` (by --port, or by the environment), once it listens."""
    data_dir.mkdir(parents=True, exist_ok=True)
    options = ["--port", str(port)] if by_option else []
    process = subprocess.Popen(
        [str(MEMORY_SYSTEM), "serve", "mcp", *options],
        env=server_env(data_dir, **env),
        cwd=data_dir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
    )
    try:
        wait_for_port(port, process)
    except AssertionError:
        process.kill()
        process.communicate()
        raise
    return process


@dataclass
class RunningServer:
    url: str
    process: subprocess.Popen[bytes]


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    data_dir = tmp_path_factory.mktemp("http-data")
    port = free_port()
    process = spawn_http_server(data_dir, port, MCP_AUTH_TOKEN=TOKEN)
    try:
        yield RunningServer(f"http://127.0.0.1:{port}", process)
    finally:
        process.terminate()
        process.wait(timeout=30)


def authorised() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


async def exercise_all_tools(client: Client, marker: str) -> None:
    stored = await client.call_tool("store_memory", {"text": f"The {marker} transport stores memories."})
    assert not stored.is_error
    lesson = await client.call_tool(
        "session_lessons", {"lesson_content": f"The {marker} transport is tested."}
    )
    assert not lesson.is_error
    recalled = await client.call_tool("recall_memories", {"query": f"{marker} transport"})
    assert recalled.structured_content is not None
    core = recalled.structured_content["memories"]["core"]
    assert any(marker in memory["content"] for memory in core)
    status = await client.call_tool("memory_status", {})
    assert status.structured_content is not None
    assert status.structured_content["memory_counts"]["total_memories"] >= 2
    assert stored.structured_content is not None
    forgotten = await client.call_tool(
        "forget_memories", {"memory_ids": [stored.structured_content["memory_id"]]}
    )
    assert forgotten.structured_content is not None
    assert forgotten.structured_content["forgotten"] == [stored.structured_content["memory_id"]]
    refused = await client.call_tool("recall_memories", {"query": "x", "max_results": -3})
    assert refused.is_error


@pytest.mark.anyio
async def test_all_tools_over_streamable_http(http_server: RunningServer) -> None:
    with anyio.fail_after(120):
        async with (
            httpx2.AsyncClient(headers=authorised(), timeout=60) as http,
            Client(streamable_http_client(f"{http_server.url}/mcp", http_client=http)) as client,
        ):
            tools = await client.list_tools()
            assert {tool.name for tool in tools.tools} == TOOL_NAMES
            await exercise_all_tools(client, "streamable")


@pytest.mark.anyio
async def test_all_tools_over_sse(http_server: RunningServer) -> None:
    with anyio.fail_after(120):
        async with Client(sse_client(f"{http_server.url}/sse", headers=authorised(), timeout=60)) as client:
            await exercise_all_tools(client, "sse")


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}])
@pytest.mark.parametrize("path", ["/mcp", "/sse"])
def test_requests_without_the_right_token_get_401(
    http_server: RunningServer, headers: dict[str, str], path: str
) -> None:
    method: Any = httpx2.post if path == "/mcp" else httpx2.get
    kwargs = {"json": INITIALIZE} if path == "/mcp" else {}
    response = method(f"{http_server.url}{path}", headers=headers, timeout=10, **kwargs)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert response.json()["error"] == "unauthorized"


def test_dns_rebinding_protection_stays_on(http_server: RunningServer) -> None:
    accept = {"Accept": "application/json, text/event-stream", **authorised()}
    foreign_host = httpx2.post(
        f"{http_server.url}/mcp", json=INITIALIZE, headers={**accept, "Host": "evil.example"}, timeout=10
    )
    assert foreign_host.status_code == 421
    assert "MCP_ALLOWED_HOSTS=evil.example" in foreign_host.json()["message"]
    foreign_origin = httpx2.post(
        f"{http_server.url}/mcp",
        json=INITIALIZE,
        headers={**accept, "Origin": "http://evil.example"},
        timeout=10,
    )
    assert foreign_origin.status_code == 403


def test_listening_on_every_interface_answers_the_machine_s_own_names(tmp_path: Path) -> None:
    from interfaces.http_app import own_addresses

    port = free_port()
    data_dir = tmp_path / "lan"
    data_dir.mkdir()
    process = subprocess.Popen(
        [str(MEMORY_SYSTEM), "serve", "mcp", "--host", "0.0.0.0", "--port", str(port)],
        env=server_env(data_dir, MCP_AUTH_TOKEN=TOKEN),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process)
        accept = {"Accept": "application/json, text/event-stream", **authorised()}
        answers = {
            name: httpx2.post(
                f"http://127.0.0.1:{port}/mcp", json=INITIALIZE, headers={**accept, "Host": f"{name}:{port}"}
            ).status_code
            for name in own_addresses()
        }
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)

    assert answers and all(status == 200 for status in answers.values()), answers


def test_listening_beyond_loopback_without_a_token_is_refused(tmp_path: Path) -> None:
    result = subprocess.run(
        [str(MEMORY_SYSTEM), "serve", "mcp", "--host", "0.0.0.0", "--port", str(free_port())],
        env=server_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "Refusing to listen on 0.0.0.0 without authentication" in result.stderr
    assert "MCP_AUTH_TOKEN" in result.stderr


def test_the_environment_selects_http_mode_and_mcp_http_auth_off_opens_loopback(tmp_path: Path) -> None:
    port = free_port()
    process = spawn_http_server(
        tmp_path,
        port,
        by_option=False,
        stderr=subprocess.PIPE,
        MCP_SERVER_MODE="http",
        MCP_SERVER_PORT=str(port),
        MCP_HTTP_AUTH="off",
    )
    try:
        response = httpx2.post(f"http://127.0.0.1:{port}/mcp", json=INITIALIZE, timeout=10)
        assert response.status_code != 401  # every local user is trusted, as asked
        assert httpx2.get(f"http://127.0.0.1:{port}/memories", timeout=30).status_code == 200
    finally:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0
    assert not (tmp_path / "http-token").exists()
    assert b"MCP_HTTP_AUTH=off: every local user" in stderr


def test_a_server_started_without_settings_answers_only_clients_with_its_token(tmp_path: Path) -> None:
    """Issue 27: another local user (a client without the token file's content) gets 401 from /mcp,
    /sse and the dashboard; the owner reads the token from the file only they can read."""
    port = free_port()
    data_dir = tmp_path / "data"
    process = spawn_http_server(data_dir, port, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        token_file = data_dir / "http-token"
        assert token_file.stat().st_mode & 0o777 == 0o600
        token = token_file.read_text().strip()
        accept = {"Accept": "application/json, text/event-stream"}
        assert httpx2.post(f"{url}/mcp", json=INITIALIZE, headers=accept, timeout=10).status_code == 401
        assert httpx2.get(f"{url}/sse", timeout=10).status_code == 401
        for path in ("/", "/search?q=deploy", "/memories", "/status", "/trash"):
            assert httpx2.get(f"{url}{path}", timeout=30).status_code == 401, path
        assert httpx2.post(f"{url}/trash/restore", data={"memory_id": "x"}, timeout=30).status_code == 401

        async def store_and_recall() -> list[str]:
            async with (
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
                Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
            ):
                await client.call_tool("store_memory", {"text": "The deploy key lives in the vault."})
                found = await client.call_tool("recall_memories", {"query": "deploy key"})
                assert found.structured_content is not None
                return [m["content"] for m in found.structured_content["memories"]["core"]]

        assert "The deploy key lives in the vault." in anyio.run(store_and_recall)
        stranger = httpx2.get(f"{url}/search?q=deploy+key", timeout=30)
        assert stranger.status_code == 401 and "vault" not in stranger.text
        with httpx2.Client(base_url=url, timeout=30, follow_redirects=False) as owner:
            csrf = re.search(r'name="csrf" value="([^"]+)"', owner.get("/login").text)
            assert csrf is not None
            logged = owner.post("/login", data={"csrf": csrf.group(1), "token": token, "next": "/"})
            assert logged.status_code == 303
            assert "vault" in owner.get("/search?q=deploy+key").text
    finally:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0
    assert token.encode() not in stderr  # the token stays in its file; the log gets a one-time link
    assert f"{url}/login?once=".encode() in stderr
    assert b"memory_system token" in stderr


def test_the_printed_login_link_logs_a_browser_in_once(tmp_path: Path) -> None:
    port = free_port()
    process = spawn_http_server(tmp_path / "data", port, stderr=subprocess.PIPE)
    try:
        link = _printed_login_link(process)
        with httpx2.Client(timeout=30, follow_redirects=False) as browser:
            assert browser.get(link).status_code == 200
            assert browser.get(f"http://127.0.0.1:{port}/memories").status_code == 200
        with httpx2.Client(timeout=30, follow_redirects=False) as stranger:
            assert stranger.get(link).status_code == 401  # spent
            assert stranger.get(f"http://127.0.0.1:{port}/status").status_code == 401
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)


def _printed_login_link(process: subprocess.Popen[bytes]) -> str:
    """The one-time login link the server printed on stderr (it prints it before it listens)."""
    assert process.stderr is not None
    for line in iter(process.stderr.readline, b""):
        found = re.search(r"(http://\S+/login\?once=\S+)", line.decode())
        if found:
            return found.group(1)
    raise AssertionError("no login link on stderr")


def test_sigterm_stops_the_http_server_cleanly(tmp_path: Path) -> None:
    port = free_port()
    process = spawn_http_server(tmp_path, port, stderr=subprocess.PIPE)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0
    assert b"Traceback" not in stderr


def test_the_token_never_reaches_logs_or_status(tmp_path: Path) -> None:
    port = free_port()
    secret = "tok-" + "9f3c" * 8
    process = spawn_http_server(
        tmp_path, port, stderr=subprocess.PIPE, MCP_AUTH_TOKEN=secret, COGNITIVE_MEMORY_LOG_LEVEL="DEBUG"
    )
    try:
        refused = httpx2.post(
            f"http://127.0.0.1:{port}/mcp", json=INITIALIZE, headers={"Authorization": "Bearer x"}
        )
        assert refused.status_code == 401 and secret not in refused.text

        async def status() -> str:
            async with (
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {secret}"}, timeout=60) as http,
                Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client,
            ):
                result = await client.call_tool("memory_status", {"detailed": True})
                return json.dumps(result.model_dump(mode="json"))

        assert secret not in anyio.run(status)
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    assert secret.encode() not in stderr
    assert b"DEBUG" in stderr  # the log was as verbose as it gets
