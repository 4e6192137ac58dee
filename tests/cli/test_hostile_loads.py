"""Loads under hostile conditions, in real `memory_system` processes (issue #15): two loads of one
tree at once, two git-loads of one repository at once, and file names that are not UTF-8."""

from __future__ import annotations

import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import closing
from pathlib import Path

import pytest

from tests.gitrepo import build_sample_history

MEMORY_SYSTEM = Path(sys.executable).parent / "memory_system"
NOTE = "# Note {n}\n\nNote {n} is about topic {topic}: a sentence long enough to stand as one memory.\n"


def _env(data_dir: Path) -> dict[str, str]:
    return {**os.environ, "COGNITIVE_MEMORY_DATA_DIR": str(data_dir)}


def _run_at_once(data_dir: Path, *commands: list[str]) -> list[subprocess.CompletedProcess[str]]:
    """Start every command before waiting for any, so they really run at the same time."""
    data_dir.mkdir(parents=True, exist_ok=True)
    processes = [
        subprocess.Popen(
            [str(MEMORY_SYSTEM), *command],
            env=_env(data_dir),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for command in commands
    ]
    results = []
    for process, command in zip(processes, commands, strict=True):
        stdout, stderr = process.communicate(timeout=300)
        results.append(subprocess.CompletedProcess(command, process.returncode, stdout, stderr))
    return results


def _counts(data_dir: Path) -> tuple[int, int, int]:
    """(memories, source chunks, loaded memories without a source chunk row)."""
    with closing(sqlite3.connect(data_dir / "cognitive_memory.db")) as conn:
        (memories,) = conn.execute("SELECT COUNT(*) FROM memories").fetchone()
        (chunks,) = conn.execute("SELECT COUNT(*) FROM source_chunks").fetchone()
        (orphans,) = conn.execute(
            "SELECT COUNT(*) FROM memories WHERE id NOT IN (SELECT memory_id FROM source_chunks)"
        ).fetchone()
    return memories, chunks, orphans


@pytest.mark.subprocess
def test_two_concurrent_loads_of_200_files_leave_exactly_the_memories_of_one(
    tmp_path: Path, data_dir: Path
) -> None:
    tree = tmp_path / "notes"
    tree.mkdir()
    for n in range(200):
        (tree / f"note{n:03d}.md").write_text(NOTE.format(n=n, topic=n * 7 % 13))
    first, second = _run_at_once(data_dir, ["load", str(tree), "--json"], ["load", str(tree), "--json"])
    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    assert _counts(data_dir) == (200, 200, 0)
    outputs = [first.stdout, second.stdout]
    assert sum('"added": 200' in output for output in outputs) == 1, outputs
    assert sum('"unchanged": 200' in output for output in outputs) == 1, outputs
    # The one that came second said it waited, and why.
    assert "Waiting for another load" in first.stderr + second.stderr


@pytest.mark.subprocess
def test_two_concurrent_git_loads_of_one_repository_keep_one_set_of_patterns(
    tmp_path: Path, data_dir: Path
) -> None:
    repo = build_sample_history(tmp_path / "toolkit")
    command = ["git-load", str(repo.path), "--json"]
    first, second = _run_at_once(data_dir, command, command)
    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    assert _counts(data_dir) == (5, 5, 0)


@pytest.fixture
def odd_names(tmp_path: Path) -> Path:
    """A tree with a file and a directory whose names are Latin-1, not UTF-8, beside good files."""
    root = tmp_path / "notes"
    root.mkdir()
    (root / "good.md").write_text("# Good\n\nThis note has a proper UTF-8 name and must load.\n")
    bad_dir = os.path.join(os.fsencode(root), b"caf\xe9")
    os.mkdir(bad_dir)
    with open(os.path.join(bad_dir, b"inner.md"), "wb") as file:
        file.write(b"# Inner\n\nInside a directory whose name is not UTF-8.\n")
    with open(os.path.join(os.fsencode(root), b"men\xfc.md"), "wb") as file:
        file.write(b"# Menu\n\nA file whose own name is not UTF-8.\n")
    return root


@pytest.mark.subprocess
def test_a_file_name_that_is_not_utf8_is_skipped_with_its_reason_and_the_rest_loads(
    odd_names: Path, data_dir: Path
) -> None:
    (result,) = _run_at_once(data_dir, ["load", str(odd_names), "--quiet"])
    assert result.returncode == 3, result.stderr
    assert "Traceback" not in result.stderr
    assert "Chunks: 1 added" in result.stdout
    assert f"{odd_names}/men\\xfc.md: file name is not UTF-8" in result.stdout
    assert f"{odd_names}/caf\\xe9: directory name is not UTF-8" in result.stdout
    assert _counts(data_dir) == (1, 1, 0)


@pytest.mark.subprocess
def test_remove_file_of_a_name_that_is_not_utf8_answers_in_one_line(odd_names: Path, data_dir: Path) -> None:
    path = os.fsdecode(os.path.join(os.fsencode(odd_names), b"men\xfc.md"))
    (result,) = _run_at_once(data_dir, ["remove-file", path])
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"Error: {odd_names}/men\\xfc.md: name is not UTF-8 (bytes that are not are shown as \\xNN); "
        "load skips such names, so no memory was loaded from it and there is nothing to remove."
    )


def _wait_for(lines: queue.Queue[str], seen: list[str], needle: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            seen.append(lines.get(timeout=left))
        except queue.Empty:
            break
        if needle in seen[-1]:
            return
    raise AssertionError(f"{needle!r} never appeared in: {''.join(seen)}")


@pytest.mark.subprocess
def test_watch_skips_a_new_file_name_that_is_not_utf8_and_loads_the_good_one_beside_it(
    odd_names: Path, data_dir: Path
) -> None:
    command = [str(MEMORY_SYSTEM), "watch", str(odd_names)]
    process = subprocess.Popen(
        command, env=_env(data_dir), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    stream, lines, seen = process.stderr, queue.Queue[str](), list[str]()

    def pump() -> None:
        for line in stream:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    try:
        _wait_for(lines, seen, "Watching for changes", 120)
        with open(os.path.join(os.fsencode(odd_names), b"r\xe9sum\xe9.md"), "wb") as file:
            file.write(b"# Resume\n\nWritten while watching, under a Latin-1 name.\n")
        (odd_names / "later.md").write_text("# Later\n\nWritten while watching, with a good name.\n")
        _wait_for(lines, seen, "r\\xe9sum\\xe9.md: file name is not UTF-8", 60)
        _wait_for(lines, seen, "Watching for changes", 60)
        assert process.poll() is None, "".join(seen)
        assert _counts(data_dir) == (2, 2, 0)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        stream.close()
    assert "Traceback" not in "".join(seen)
