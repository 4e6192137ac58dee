"""`memory_system git-load` through typer's runner: a summary, JSON, a no-op re-run, clear failures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memory_system.cli import app
from tests.gitrepo import build_sample_history

runner = CliRunner()


@pytest.mark.model
def test_git_load_prints_a_summary_then_a_rerun_is_up_to_date(tmp_path: Path) -> None:
    repo = build_sample_history(tmp_path / "toolkit")
    first = runner.invoke(app, ["git-load", str(repo.path)])
    assert first.exit_code == 0, first.output
    assert "Commits: 11 read (the whole history), 11 in the history" in first.stdout
    assert "Patterns: 2 co-change, 1 hotspot, 2 solution" in first.stdout
    assert "Memories: 5 added, 0 updated, 0 removed, 0 unchanged" in first.stdout
    again = runner.invoke(app, ["git-load", str(repo.path / "src"), "--json"])
    assert again.exit_code == 0, again.output
    body = json.loads(again.stdout)
    assert body["commits_read"] == 0
    assert body["model_load_seconds"] == 0.0  # nothing new to embed: the model is never loaded
    assert body["memories"] == {"added": 0, "updated": 0, "removed": 0, "unchanged": 5}
    assert body["patterns"] == {"cochange": 2, "hotspot": 1, "solution": 2}
    assert body["repository"] == str(repo.path.resolve())


def test_git_load_of_a_plain_directory_fails_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    (tmp_path / "notes").mkdir()
    result = runner.invoke(app, ["git-load", str(tmp_path / "notes")])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith(f"Error: {tmp_path / 'notes'} is not a git repository")
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_git_load_of_a_missing_path_fails_with_one_line(tmp_path: Path) -> None:
    result = runner.invoke(app, ["git-load", str(tmp_path / "nowhere")])
    assert result.exit_code == 1
    assert result.stderr.strip() == f"Error: {tmp_path / 'nowhere'} does not exist."
