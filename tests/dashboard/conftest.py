"""Dashboard fixtures: an in-process app for TestClient, and for the browser tests a real
`memory_system serve mcp --port` (hash encoder) with Debian's Chromium driven by Playwright.

Where no browser can be had, the browser tests are skipped and the run's summary says so in
capitals (``pytest_terminal_summary`` in tests/conftest.py): they never pass silently.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from cognitive_memory.encoding import HashEncoder
from cognitive_memory.main import build_system
from cognitive_memory.service import MemoryService
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem
from interfaces.dashboard import DashboardSource
from interfaces.http_app import create_dashboard_app

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-output" / "dashboard"
TOKEN = "dashboard-test-token"
PORT = 8000  # the port TestClient's requests name in their Host header
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WITH_HASH = (
    "import sys, cognitive_memory.main as m; from cognitive_memory.encoding import HashEncoder; "
    "m.model_encoder = lambda settings: HashEncoder(); from memory_system.cli import app; "
    "sys.argv = ['memory_system', *sys.argv[1:]]; app()"
)


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "the page holds no CSRF token"
    return found.group(1)


@pytest.fixture
def service(hash_system: CognitiveSystem) -> MemoryService:
    return MemoryService(hash_system, session_id="dashboard-tests")


@pytest.fixture
def make_client(service: MemoryService) -> Callable[..., TestClient]:
    """A TestClient on the dashboard alone, as `memory_system ui` serves it."""

    def make(token: str | None = TOKEN) -> TestClient:
        app = create_dashboard_app(DashboardSource(service), host="127.0.0.1", port=PORT, token=token)
        return TestClient(app, base_url=f"http://127.0.0.1:{PORT}", follow_redirects=False)

    return make


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    """A client logged in with the token."""
    client = make_client()
    login(client)
    return client


def login(client: TestClient, token: str = TOKEN) -> Any:
    csrf = csrf_of(client.get("/login").text)
    return client.post("/login", data={"csrf": csrf, "token": token, "next": "/"})


# --- the real server and the browser ---------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class LiveServer:
    url: str
    ids: dict[str, str]


def _seed(data_dir: Path) -> dict[str, str]:
    """The memories the browser tests use, stored before the server owns the store."""
    texts = {
        "deploy": "Deploys run through rsync to the blue host; the staging step checks disk space first.",
        "billing": "We chose PostgreSQL for the billing service because of its row-level locking.",
        "cache": "The page cache is warmed after each deploy so the first visitors are not slow.",
        "edit_me": "Release notes are drafted on Fridays by whoever cut the release.",
        "forget_me": "The old VPN endpoint at vpn-legacy is retired and can be forgotten.",
        "script": "XSS probe one <script>window.__xss = 1; alert('script')</script> in a memory.",
        "img": 'XSS probe two <img src=x onerror="window.__xss = 2; alert(2)"> in a memory.',
        "link": 'XSS probe three [click](javascript:window.__xss=3) <a href="javascript:alert(3)">a</a>.',
        "markdown": "XSS probe four **bold** <b onmouseover=alert(4)>html</b> <svg onload=alert(5)></svg>.",
    }
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(data_dir))
        system = build_system(Settings(env_file=None), encoder=HashEncoder())
        try:
            service = MemoryService(system, session_id="seed")
            ids = {name: service.store_experience(text).memory_id for name, text in texts.items()}
            service.link_memories(ids["deploy"], ids["cache"], "relates_to")
            service.link_memories(ids["cache"], ids["billing"], "caused_by")
            service.link_memories(ids["img"], ids["deploy"], "example_of")
            service.link_memories(ids["script"], ids["img"], "relates_to")
        finally:
            system.close()
    return ids


def _wait_until_listening(port: int, process: subprocess.Popen[bytes], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited early with {process.returncode}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)  # polling a port; not a test's wait on behaviour
    raise AssertionError(f"the server did not listen on {port} within {seconds} s")


@pytest.fixture(scope="module")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """`memory_system serve mcp --port N` with MCP_AUTH_TOKEN set, hash encoder, seeded memories."""
    data_dir = tmp_path_factory.mktemp("dashboard-data")
    ids = _seed(data_dir)
    port = free_port()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(data_dir),
        "COGNITIVE_MEMORY_DATA_DIR": str(data_dir),
        "MCP_AUTH_TOKEN": TOKEN,
    }
    process = subprocess.Popen(
        [sys.executable, "-c", WITH_HASH, "serve", "mcp", "--port", str(port)],
        env=env,
        cwd=data_dir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_until_listening(port, process)
        yield LiveServer(f"http://127.0.0.1:{port}", ids)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _chromium() -> str | None:
    given = os.environ.get("DASHBOARD_CHROMIUM")
    if given:
        return given
    return next(
        (
            path
            for path in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser"))
            if path
        ),
        None,
    )


def _skip_browser(reason: str) -> None:
    pytest.skip(f"BROWSER TESTS DID NOT RUN: {reason}")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium under Playwright, or a loud skip. Module-scoped: while Playwright's sync
    API is open it holds an event loop in this thread, which later anyio tests must not meet."""
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        _skip_browser("playwright is not installed (pip install -e '.[dev]')")
    executable = _chromium()
    if executable is None or not Path(executable).exists():
        where = executable or "/usr/bin/chromium"
        _skip_browser(f"no Chromium at {where} (apt-get install -y chromium, or set DASHBOARD_CHROMIUM)")
    with sync_playwright() as playwright:
        try:
            launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        except Error as exc:
            _skip_browser(f"Chromium at {executable} did not start: {str(exc).splitlines()[0]}")
        yield launched
        launched.close()
