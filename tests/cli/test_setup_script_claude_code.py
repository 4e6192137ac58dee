"""scripts/setup_mcp_for_claude.sh's offer to set up Claude Code (`memory_system setup claude-code`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_setup_script import run_setup


@pytest.mark.subprocess
def test_claude_code_project_option_sets_up_the_project_with_the_entry_s_data_dir(
    tmp_path: Path, data_dir: Path
) -> None:
    config, project, entry_dir = tmp_path / "claude.json", tmp_path / "shop", tmp_path / "entry-data"
    project.mkdir()
    config.write_text(
        json.dumps(
            {"mcpServers": {"cognitive-memory": {"env": {"COGNITIVE_MEMORY_DATA_DIR": str(entry_dir)}}}}
        )
    )

    result = run_setup(
        tmp_path / "home", data_dir, "--config", str(config), "--claude-code-project", str(project)
    )

    assert result.returncode == 0, result.stderr
    server = json.loads((project / ".mcp.json").read_text())["mcpServers"]["cognitive-memory"]
    assert server["env"] == {"COGNITIVE_MEMORY_DATA_DIR": str(entry_dir)}
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    (group,) = hooks["UserPromptSubmit"]
    assert group["hooks"][0]["command"].startswith(f"COGNITIVE_MEMORY_DATA_DIR={entry_dir} ")
    assert not (tmp_path / "home" / ".claude.json").exists()


@pytest.mark.subprocess
def test_without_a_terminal_or_an_option_claude_code_is_left_alone(tmp_path: Path, data_dir: Path) -> None:
    home = tmp_path / "home"

    result = run_setup(home, data_dir, "--config", str(tmp_path / "claude.json"))

    assert result.returncode == 0, result.stderr
    assert "Claude Code not set up; later: memory_system setup claude-code" in result.stdout
    assert not (home / ".claude.json").exists() and not (home / ".claude").exists()


@pytest.mark.subprocess
def test_a_missing_claude_code_project_is_refused_before_anything_is_touched(
    tmp_path: Path, data_dir: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()

    result = run_setup(home, data_dir, "--claude-code-project", str(tmp_path / "nowhere"))

    assert result.returncode == 2
    assert "--claude-code-project needs the path of an existing project directory" in result.stderr
    assert list(home.iterdir()) == []
