"""scripts/setup_mcp_for_claude.sh against a temporary HOME with an existing config."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "setup_mcp_for_claude.sh"


def run_setup(home: Path, data_dir: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    env = {
        "HOME": str(home),
        "PATH": os.environ["PATH"],
        "COGNITIVE_MEMORY_DATA_DIR": str(data_dir),
    }
    return subprocess.run(
        ["bash", str(SCRIPT), *arguments],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.subprocess
def test_setup_merges_one_entry_keeps_the_rest_and_is_idempotent(tmp_path: Path, data_dir: Path) -> None:
    config = tmp_path / "home" / ".config" / "Claude" / "claude_desktop_config.json"
    config.parent.mkdir(parents=True)
    original = {"theme": "dark", "mcpServers": {"other": {"command": "other-server", "args": ["--x"]}}}
    config.write_text(json.dumps(original))

    first = run_setup(tmp_path / "home", data_dir)
    assert first.returncode == 0, first.stderr
    second = run_setup(tmp_path / "home", data_dir)
    assert second.returncode == 0, second.stderr

    merged = json.loads(config.read_text())
    assert merged["theme"] == "dark"
    assert merged["mcpServers"]["other"] == original["mcpServers"]["other"]
    entry = merged["mcpServers"]["cognitive-memory"]
    assert Path(entry["command"]).is_absolute() and entry["command"].endswith("/.venv/bin/memory_system")
    assert entry["args"] == ["serve", "mcp"]
    assert len(merged["mcpServers"]) == 2
    (backup,) = config.parent.glob("claude_desktop_config.json.backup.*")  # the second run changed nothing
    assert json.loads(backup.read_text()) == original
    assert "nothing changed" in second.stderr
    assert "claude mcp add cognitive-memory" in first.stdout
    assert "OK    round_trip" in first.stdout  # the script ends with a passing doctor run


@pytest.mark.subprocess
def test_setup_refuses_a_config_that_is_not_json_and_leaves_it_alone(tmp_path: Path, data_dir: Path) -> None:
    config = tmp_path / "home" / ".config" / "Claude" / "claude_desktop_config.json"
    config.parent.mkdir(parents=True)
    config.write_text("{ not json")
    result = run_setup(tmp_path / "home", data_dir)
    assert result.returncode != 0
    assert "is not valid JSON" in result.stderr
    assert config.read_text() == "{ not json"


@pytest.mark.subprocess
def test_help_and_bad_arguments_change_nothing(tmp_path: Path, data_dir: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()

    shown = run_setup(home, data_dir, "--help")
    missing = run_setup(home, data_dir, "--config")
    unknown = run_setup(home, data_dir, "--bogus")

    assert shown.returncode == 0 and shown.stdout.startswith("Usage: ")
    assert (missing.returncode, unknown.returncode) == (2, 2)
    assert "--config needs the path" in missing.stderr and "unknown argument '--bogus'" in unknown.stderr
    assert list(home.iterdir()) == []  # no config, no backup, no doctor run


@pytest.mark.subprocess
def test_doctor_checks_the_data_directory_of_the_entry_s_env(tmp_path: Path, data_dir: Path) -> None:
    config = tmp_path / "claude.json"
    entry_dir = tmp_path / "entry-data"
    config.write_text(
        json.dumps(
            {"mcpServers": {"cognitive-memory": {"env": {"COGNITIVE_MEMORY_DATA_DIR": str(entry_dir)}}}}
        )
    )

    result = run_setup(tmp_path / "home", data_dir, "--config", str(config))

    assert result.returncode == 0, result.stderr
    assert f"data_dir={entry_dir}," in result.stdout
    assert json.loads(config.read_text())["mcpServers"]["cognitive-memory"]["args"] == ["serve", "mcp"]


@pytest.mark.subprocess
def test_doctor_runs_with_the_environment_the_entry_gives_the_server_not_the_shell_s(
    tmp_path: Path, data_dir: Path
) -> None:
    home = tmp_path / "home"
    config = tmp_path / "claude.json"
    config.write_text(json.dumps({"mcpServers": {"cognitive-memory": {"env": {}}}}))

    result = run_setup(home, data_dir, "--config", str(config))  # the shell sets COGNITIVE_MEMORY_DATA_DIR

    assert result.returncode == 0, result.stderr
    assert f"data_dir={data_dir}," not in result.stdout
    assert f"data_dir={home}{os.sep}" in result.stdout  # the default one, under the HOME the server gets
    assert (
        "COGNITIVE_MEMORY_DATA_DIR" in result.stderr
    )  # named: the shell sets it, the server will not see it
