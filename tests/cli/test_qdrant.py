"""`memory_system qdrant start|stop|status`: decisions, commands, messages, and stopping only ours."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memory_system import qdrant_server
from memory_system.cli import app
from tests.blocking import ends_within
from tests.hooking import fifo

runner = CliRunner()

FAKE_QDRANT = """\
import json, re, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
config = open(sys.argv[sys.argv.index("--config-path") + 1]).read()
port = int(re.search(r"http_port: (\\d+)", config).group(1))
class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        body = {"/": {"title": "qdrant - vector search engine", "version": "1.19.0"},
                "/collections": {"result": {"collections": [{"name": "cognitive_memory"}]}},
                "/collections/cognitive_memory": {"result": {"points_count": 7}}}.get(self.path)
        self.send_response(200 if body else 404)
        self.end_headers()
        self.wfile.write(json.dumps(body or {}).encode())
    def log_message(self, *args):
        pass
HTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def fake_qdrant(tmp_path: Path) -> str:
    binary = tmp_path / "bin" / "qdrant"
    binary.parent.mkdir()
    binary.write_text(f"#!{sys.executable}\n{FAKE_QDRANT}")
    binary.chmod(0o755)
    return str(binary)


def test_docker_comes_first_with_a_compose_project_of_this_data_directory(tmp_path: Path) -> None:
    plan = qdrant_server.plan_start(tmp_path, docker=True, binary="/usr/bin/qdrant", port=6400)
    assert plan.kind == "compose"
    compose_file = str(tmp_path / "qdrant-server" / "compose.yml")
    project = qdrant_server.project_name(tmp_path)
    assert plan.command == ["docker", "compose", "-p", project, "-f", compose_file, "up", "-d"]
    text = plan.files[compose_file]
    assert f"image: {qdrant_server.IMAGE}" in text
    assert '"127.0.0.1:6400:6333"' in text
    assert "./storage:/qdrant/storage" in text
    assert f'"{qdrant_server.LABEL}": "{tmp_path.resolve()}"' in text
    assert plan.url == "http://127.0.0.1:6400"
    assert qdrant_server.project_name(tmp_path / "other") != project


def test_without_docker_a_binary_on_path_is_used_with_data_under_the_data_directory(tmp_path: Path) -> None:
    plan = qdrant_server.plan_start(tmp_path, docker=False, binary="/opt/qdrant", port=6400)
    config = str(tmp_path / "qdrant-server" / "config.yaml")
    assert (plan.kind, plan.command) == ("binary", ["/opt/qdrant", "--config-path", config])
    assert f"storage_path: {tmp_path / 'qdrant-server' / 'storage'}" in plan.files[config]
    assert "host: 127.0.0.1" in plan.files[config] and "http_port: 6400" in plan.files[config]


def test_with_neither_start_says_the_embedded_store_stays_in_use(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(qdrant_server, "docker_available", lambda: False)
    monkeypatch.setenv("PATH", "/nonexistent")
    result = runner.invoke(app, ["qdrant", "start"])
    assert result.exit_code == 1
    assert "No Docker engine answers and no `qdrant` binary is on PATH" in result.output
    assert f"embedded Qdrant Edge store in {data_dir / 'vectors'} stays in use" in result.output


def test_status_reports_the_embedded_store(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(qdrant_server, "docker_available", lambda: False)
    result = runner.invoke(app, ["qdrant", "status", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert (report["mode"], report["path"], report["points"]) == ("embedded", str(data_dir / "vectors"), 0)
    assert report["managed"] is None


def test_stop_with_nothing_started_says_so(data_dir: Path) -> None:
    result = runner.invoke(app, ["qdrant", "stop"])
    assert result.exit_code == 0
    assert "Nothing to stop" in result.output


def test_a_started_binary_is_found_by_status_and_stopped_by_stop(
    data_dir: Path, fake_qdrant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir.mkdir(parents=True)
    plan = qdrant_server.plan_start(data_dir, docker=False, binary=fake_qdrant, port=free_port())
    started = qdrant_server.launch(plan, data_dir)
    qdrant_server.save_state(data_dir, started)
    try:
        assert qdrant_server.wait_until_ready(started.url, 30)
        monkeypatch.setattr(qdrant_server, "docker_available", lambda: False)
        status = runner.invoke(app, ["qdrant", "status", "--json"])
        report = json.loads(status.output)
        assert (report["mode"], report["url"], report["version"]) == ("server", started.url, "1.19.0")
        assert report["collections"] == {"cognitive_memory": 7}
        assert report["managed"]["pid"] == started.pid
        stopped = runner.invoke(app, ["qdrant", "stop"])
        assert f"Stopped the qdrant process {started.pid}" in stopped.output
        assert "The embedded store is in use again; 0 vectors copied from SQLite." in stopped.output
        assert started.pid is not None
        os.waitpid(started.pid, 0)
        assert qdrant_server.load_state(data_dir) is None
        assert qdrant_server.probe(started.url) is None
    finally:
        if started.pid is not None:
            with pytest.raises(ProcessLookupError):
                os.kill(started.pid, 0)


@pytest.mark.subprocess
def test_stop_never_kills_a_process_that_is_not_the_one_it_started(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    stranger = subprocess.Popen(["sleep", "60"])
    try:
        state = qdrant_server.ManagedServer(
            "binary", "http://127.0.0.1:1", ["qdrant"], pid=stranger.pid, config_path=str(data_dir / "x.yaml")
        )
        qdrant_server.save_state(data_dir, state)
        result = runner.invoke(app, ["qdrant", "stop"])
        assert "no longer running; forgot it" in result.output
        assert stranger.poll() is None  # still alive
        assert qdrant_server.load_state(data_dir) is None
    finally:
        stranger.send_signal(signal.SIGKILL)
        stranger.wait()


def test_a_fifo_as_the_state_file_is_ignored_with_a_warning(
    data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data_dir.mkdir()
    with fifo(data_dir / qdrant_server.STATE_FILE) as path:
        assert ends_within(5, lambda: qdrant_server.load_state(data_dir), [path]) is None
    assert f"Ignoring {path}: it is a FIFO (named pipe)" in caplog.text


def test_the_state_is_saved_over_a_fifo_without_opening_it(data_dir: Path) -> None:
    state = qdrant_server.ManagedServer(kind="binary", url="http://127.0.0.1:1", command=["qdrant"])
    data_dir.mkdir()
    with fifo(data_dir / qdrant_server.STATE_FILE) as path:
        ends_within(5, lambda: qdrant_server.save_state(data_dir, state), [path])
    assert qdrant_server.load_state(data_dir) == state


def test_a_state_file_of_another_user_does_not_choose_the_server(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """In a data directory others may write, their state file would send the store to their server."""
    theirs = qdrant_server.ManagedServer(kind="binary", url="http://127.0.0.1:1", command=["qdrant"])
    data_dir.mkdir()
    qdrant_server.save_state(data_dir, theirs)
    assert qdrant_server.load_state(data_dir) == theirs
    mine = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: mine + 1)
    assert qdrant_server.load_state(data_dir) is None
    assert "it is another user's file" in caplog.text
