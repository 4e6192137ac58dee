"""`memory_system ui`: the dashboard alone on 127.0.0.1, in a real process (hash encoder)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest

from memory_system.ui_command import write_login_page
from tests.dashboard.conftest import WITH_HASH, _wait_until_listening, free_port


def spawn_ui(data_dir: Path, port: int, **env: str) -> subprocess.Popen[bytes]:
    data_dir.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(
        [sys.executable, "-c", WITH_HASH, "ui", "--port", str(port)],
        env={
            "PATH": os.environ["PATH"],
            "HOME": str(data_dir),
            "COGNITIVE_MEMORY_DATA_DIR": str(data_dir),
            **env,
        },
        cwd=data_dir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _wait_until_listening(port, process)
    return process


def _wait_for_text(path: Path, process: subprocess.Popen[bytes], seconds: float = 30) -> str:
    """What the fake browser wrote (it runs once the server listens); polled like a port."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.05)  # polling a file another process writes; not a test's wait on behaviour
    raise AssertionError(f"the browser was not opened within {seconds} s")


def stop(process: subprocess.Popen[bytes]) -> bytes:
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr.decode()
    assert b"Traceback" not in stderr
    return stderr


@pytest.mark.subprocess
def test_ui_serves_the_dashboard_on_loopback_and_ctrl_c_ends_it_with_status_0(data_dir: Path) -> None:
    port = free_port()
    process = spawn_ui(data_dir, port, MCP_HTTP_AUTH="off")
    try:
        page = httpx2.get(f"http://127.0.0.1:{port}/status", timeout=30)
        assert page.status_code == 200  # every local user trusted, as asked: no login
        assert "Doctor" in page.text
        assert httpx2.post(f"http://127.0.0.1:{port}/trash/restore", timeout=30).status_code == 403
        foreign = httpx2.get(f"http://127.0.0.1:{port}/", headers={"host": "evil.example"}, timeout=30)
        assert foreign.status_code == 421
    finally:
        stderr = stop(process)
    assert f"http://127.0.0.1:{port}/".encode() in stderr


@pytest.mark.subprocess
def test_ui_without_settings_wants_the_generated_token_and_prints_a_one_time_link(data_dir: Path) -> None:
    port = free_port()
    process = spawn_ui(data_dir, port)
    url = f"http://127.0.0.1:{port}"
    try:
        assert httpx2.get(f"{url}/status", timeout=30).status_code == 401  # another local user
        assert process.stderr is not None
        link = next(
            found.group(1)
            for line in iter(process.stderr.readline, b"")
            if (found := re.search(r"(http://\S+/login\?once=\S+)", line.decode()))
        )
        with httpx2.Client(base_url=url, timeout=30, follow_redirects=False) as browser:
            assert browser.get(link).status_code == 200
            assert browser.get("/status").status_code == 200
        assert httpx2.get(link, timeout=30).status_code == 401  # spent
        token = (data_dir / "http-token").read_text().strip()
        with httpx2.Client(base_url=url, timeout=30, follow_redirects=False) as owner:
            csrf = re.search(r'name="csrf" value="([^"]+)"', owner.get("/login").text)
            assert csrf is not None
            answer = owner.post("/login", data={"csrf": csrf.group(1), "token": token, "next": "/"})
            assert answer.status_code == 303
            assert owner.get("/status").status_code == 200
    finally:
        stderr = stop(process)
    assert token.encode() not in stderr


def spawn_ui_open(data_dir: Path, port: int, opened: Path) -> subprocess.Popen[bytes]:
    """`ui --open` with a fake browser (``BROWSER``) that writes down the URL it was given."""
    browser = opened.with_name("browser.sh")
    browser.write_text(f'#!/bin/sh\necho "$1" > {opened}\n')
    browser.chmod(0o700)
    data_dir.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(
        [sys.executable, "-c", WITH_HASH, "ui", "--port", str(port), "--open"],
        env={
            "PATH": os.environ["PATH"],
            "HOME": str(data_dir),
            "COGNITIVE_MEMORY_DATA_DIR": str(data_dir),
            "BROWSER": str(browser),
        },
        cwd=data_dir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _wait_until_listening(port, process)
    return process


@pytest.mark.subprocess
def test_ui_open_logs_the_browser_in_through_a_private_page(data_dir: Path, tmp_path: Path) -> None:
    port = free_port()
    process = spawn_ui_open(data_dir, port, tmp_path / "opened")
    try:
        uri = _wait_for_text(tmp_path / "opened", process)
        assert uri.startswith("file://") and "once=" not in uri  # never the code on a command line
        page = Path(uri.removeprefix("file://"))
        assert page.stat().st_mode & 0o777 == 0o600
        link = re.search(r'url=([^"]+)"', page.read_text())
        assert link is not None
        with httpx2.Client(timeout=30, follow_redirects=False) as client:
            assert client.get(link.group(1)).status_code == 200
            assert client.get(f"http://127.0.0.1:{port}/status").status_code == 200
    finally:
        stop(process)
    assert not page.exists()  # removed when the dashboard stops


def test_ui_open_lands_logged_in_in_a_real_browser(browser: Any, data_dir: Path, tmp_path: Path) -> None:
    """The cookie is SameSite=Strict and the browser comes from a file:// page: the link's page
    moves on by a refresh of its own, so the cookie is sent and the dashboard opens logged in."""
    port = free_port()
    process = spawn_ui_open(data_dir, port, tmp_path / "opened")
    try:
        uri = _wait_for_text(tmp_path / "opened", process)
        context = browser.new_context()
        context.set_default_timeout(15_000)
        page = context.new_page()
        page.goto(uri)
        page.wait_for_url(f"http://127.0.0.1:{port}/")
        page.wait_for_selector("form.logout")
        assert page.locator("#token").count() == 0
        assert "once=" not in page.url
        page.goto(f"http://127.0.0.1:{port}/status")
        assert page.locator("form.logout").count() == 1
        context.close()
    finally:
        stop(process)


def test_ui_open_opens_a_private_page_that_forwards_to_the_link_never_the_link_itself(tmp_path: Path) -> None:
    link = "http://127.0.0.1:8765/login?once=abc-123_x"
    page = tmp_path / "data" / "dashboard-login.html"
    opened = write_login_page(page, link)
    assert opened == page.resolve().as_uri()
    assert page.stat().st_mode & 0o777 == 0o600
    assert f'content="0; url={link}"' in page.read_text()
    write_login_page(page, link.replace("abc", "def"))  # a second run replaces the page
    assert "def-123" in page.read_text()


@pytest.mark.parametrize(
    "setting", [{"MCP_HTTP_AUTH": "off", "MCP_AUTH_TOKEN": "t"}, {"MCP_HTTP_AUTH": "maybe"}]
)
@pytest.mark.subprocess
def test_ui_refuses_contradictory_or_unknown_auth_settings(data_dir: Path, setting: dict[str, str]) -> None:
    result = subprocess.run(
        [sys.executable, "-c", WITH_HASH, "ui", "--port", str(free_port())],
        env={
            "PATH": os.environ["PATH"],
            "HOME": str(data_dir),
            "COGNITIVE_MEMORY_DATA_DIR": str(data_dir),
            **setting,
        },
        capture_output=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert b"MCP_HTTP_AUTH" in result.stderr
    assert b"Traceback" not in result.stderr
