"""`memory_system ui`: the dashboard alone on 127.0.0.1, in a real process (hash encoder)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx2

from tests.dashboard.conftest import WITH_HASH, _wait_until_listening, free_port


def test_ui_serves_the_dashboard_on_loopback_and_ctrl_c_ends_it_with_status_0(data_dir: Path) -> None:
    port = free_port()
    env = {"PATH": os.environ["PATH"], "HOME": str(data_dir), "COGNITIVE_MEMORY_DATA_DIR": str(data_dir)}
    data_dir.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(
        [sys.executable, "-c", WITH_HASH, "ui", "--port", str(port)],
        env=env,
        cwd=data_dir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_until_listening(port, process)
        page = httpx2.get(f"http://127.0.0.1:{port}/status", timeout=30)
        assert page.status_code == 200  # no token on loopback: no login
        assert "Doctor" in page.text
        assert httpx2.post(f"http://127.0.0.1:{port}/trash/restore", timeout=30).status_code == 403
        foreign = httpx2.get(f"http://127.0.0.1:{port}/", headers={"host": "evil.example"}, timeout=30)
        assert foreign.status_code == 421
    finally:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr.decode()
    assert b"Traceback" not in stderr
    assert f"http://127.0.0.1:{port}/".encode() in stderr
