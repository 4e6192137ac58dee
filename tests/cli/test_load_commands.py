"""`memory_system load`, `remove-file` and `watch` through typer's runner and a real process."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memory_system.cli import app

runner = CliRunner()

INSTALL = """# Installing Orbit

Orbit is a small job scheduler. This page covers installing it on every supported platform.

## Linux

Install the orbit package from the distribution repository, then enable the systemd unit with
`systemctl enable --now orbit`. Logs go to the journal.

## macOS

Use Homebrew: `brew install orbit`. The launch agent starts the scheduler at login.
"""
TUNING = """# Tuning the scheduler

How many jobs run at once is set by `max_workers` in orbit.toml; the default is twice the number
of CPU cores. Raise it for jobs that mostly wait on the network.
"""


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    (root / "ops").mkdir(parents=True)
    (root / "install.md").write_text(INSTALL)
    (root / "ops" / "tuning.md").write_text(TUNING)
    return root


@pytest.mark.model
def test_load_reload_recall_and_remove_with_the_real_model(notes: Path) -> None:
    first = runner.invoke(app, ["load", str(notes)])
    assert first.exit_code == 0, first.output
    assert "2 files (2 new or changed, 0 unchanged, 0 removed, 0 skipped)" in first.output
    assert "Chunks: 4 added, 0 updated, 0 removed, 0 unchanged" in first.output

    assert "memories/s" in first.output
    unchanged = runner.invoke(app, ["load", str(notes)])
    assert unchanged.output.rstrip().endswith(", nothing changed"), unchanged.output

    again = runner.invoke(app, ["load", str(notes), "--json"])
    assert again.exit_code == 0, again.output
    body = json.loads(again.output)
    assert (body["files_loaded"], body["files_unchanged"], body["chunks"]["unchanged"]) == (0, 2, 4)

    for query, source in (
        ("how do I install Orbit on macOS?", "📄 install.md → macOS"),
        ("how many jobs does the scheduler run at once?", "📄 tuning.md → Tuning the scheduler"),
    ):
        recalled = runner.invoke(app, ["recall", query, "--json"])
        assert json.loads(recalled.output)["memories"]["core"][0]["source"] == source

    removed = runner.invoke(app, ["remove-file", str(notes / "ops" / "tuning.md"), "--json"])
    assert json.loads(removed.output) == {
        "success": True,
        "path": str(notes / "ops" / "tuning.md"),
        "files_removed": 1,
        "memories_removed": 1,
    }


@pytest.mark.model
def test_skipped_files_are_listed_and_the_exit_code_says_so(notes: Path) -> None:
    (notes / "broken.md").write_bytes(b"# Caf\xe9 menu\n")
    result = runner.invoke(app, ["load", str(notes), "--quiet"])
    assert result.exit_code == 3, result.output
    assert f"{notes / 'broken.md'}: not UTF-8 text (invalid byte at offset 5)" in result.output
    assert "Chunks: 4 added" in result.output


def test_loading_a_missing_path_fails_with_one_line(tmp_path: Path) -> None:
    result = runner.invoke(app, ["load", str(tmp_path / "nowhere")])
    assert result.exit_code == 1
    assert result.output.strip() == f"Error: {tmp_path / 'nowhere'} does not exist."


class _Lines:
    """A process's stderr lines, read by a thread so that waiting for one can time out."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.seen: list[str] = []
        self._queue: queue.Queue[str] = queue.Queue()
        assert process.stderr is not None
        stream = process.stderr
        threading.Thread(target=lambda: [self._queue.put(line) for line in stream], daemon=True).start()

    def wait_for(self, needle: str, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._queue.get(timeout=left)
            except queue.Empty:
                break
            self.seen.append(line)
            if needle in line:
                return
        raise AssertionError(f"{needle!r} never appeared in: {''.join(self.seen)}")


@pytest.mark.subprocess
def test_watch_follows_changes_and_stops_cleanly_on_sigterm(notes: Path, data_dir: Path) -> None:
    env = {**os.environ, "COGNITIVE_MEMORY_DATA_DIR": str(data_dir)}
    command = [str(Path(sys.executable).parent / "memory_system"), "watch", str(notes)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
    lines = _Lines(process)
    try:
        lines.wait_for("Watching for changes", 120)
        (notes / "ops" / "backups.md").write_text("# Backups\n\nSnapshots are taken nightly at 02:00 UTC.\n")
        lines.wait_for("1 changed, 0 removed: 1 chunks added", 60)
        (notes / "ops" / "backups.md").write_text("# Backups\n\nSnapshots are taken nightly at 03:00 UTC.\n")
        lines.wait_for("0 chunks added, 1 updated", 60)
        (notes / "ops" / "backups.md").rename(notes / "ops" / "snapshots.md")
        lines.wait_for("1 changed, 1 removed: 1 chunks added, 0 updated, 1 removed", 60)
        (notes / "install.md").unlink()
        lines.wait_for("0 changed, 1 removed: 0 chunks added, 0 updated, 3 removed", 60)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        lines.wait_for("Stopped watching.", 5)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()
