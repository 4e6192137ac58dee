"""`memory_system setup claude-code` through typer's runner: our hooks and server merged into a
project's (or the user's) Claude Code configuration, once, with everything else kept."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from memory_system.cli import app

runner = CliRunner()
EXECUTABLE = str(Path(sys.executable).parent / "memory_system")
EVENTS = {
    "SessionStart": ("session-start", 15),
    "UserPromptSubmit": ("user-prompt-submit", 15),
    "PreCompact": ("pre-compact", 30),
    "SessionEnd": ("session-end", 30),
}
THEIR_SETTINGS: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(make test)"]},
    "hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "./lint-prompt.sh"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}],
    },
}
THEIR_SERVERS: dict[str, Any] = {"mcpServers": {"github": {"command": "gh-mcp", "args": []}}}


def setup(*options: str) -> Result:
    return runner.invoke(app, ["setup", "claude-code", *options])


def write(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))


def load(path: Path) -> Any:
    return json.loads(path.read_text())


def ours(settings: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [
        handler
        for group in settings["hooks"].get(event, [])
        for handler in group["hooks"]
        if "memory_system hook" in handler["command"]
    ]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    directory = tmp_path / "shop"
    write(directory / ".claude" / "settings.json", THEIR_SETTINGS)
    write(directory / ".mcp.json", THEIR_SERVERS)
    return directory


def test_run_twice_leaves_one_set_of_our_hooks_and_every_other_setting(project: Path, data_dir: Path) -> None:
    settings_path, servers_path = project / ".claude" / "settings.json", project / ".mcp.json"

    first = setup("--project-dir", str(project))
    after_first = (settings_path.read_text(), servers_path.read_text())
    second = setup("--project-dir", str(project))

    assert first.exit_code == 0 and second.exit_code == 0, first.output + second.output
    assert "already set up" in second.output and "nothing changed" in second.output
    assert (settings_path.read_text(), servers_path.read_text()) == after_first
    settings, servers = load(settings_path), load(servers_path)
    assert (settings["model"], settings["permissions"]) == ("opus", THEIR_SETTINGS["permissions"])
    assert settings["hooks"]["PreToolUse"] == THEIR_SETTINGS["hooks"]["PreToolUse"]
    assert settings["hooks"]["UserPromptSubmit"][0] == THEIR_SETTINGS["hooks"]["UserPromptSubmit"][0]
    for event, (command, timeout) in EVENTS.items():
        assert ours(settings, event) == [
            {
                "type": "command",
                "command": f"COGNITIVE_MEMORY_DATA_DIR={data_dir} {EXECUTABLE} hook {command}",
                "timeout": timeout,
            }
        ]
    assert servers["mcpServers"]["github"] == THEIR_SERVERS["mcpServers"]["github"]
    assert servers["mcpServers"]["cognitive-memory"] == {
        "type": "stdio",
        "command": EXECUTABLE,
        "args": ["serve", "mcp"],
        "env": {"COGNITIVE_MEMORY_DATA_DIR": str(data_dir)},
    }
    (settings_backup,) = settings_path.parent.glob("settings.json.backup.*")  # the second run wrote nothing
    (servers_backup,) = project.glob(".mcp.json.backup.*")
    assert (load(settings_backup), load(servers_backup)) == (THEIR_SETTINGS, THEIR_SERVERS)


def test_the_current_directory_is_the_default_project(tmp_path: Path) -> None:
    result = setup()

    assert result.exit_code == 0, result.output
    assert result.output.endswith("a project's .mcp.json names: approve cognitive-memory.\n")
    assert set(ours(load(tmp_path / ".claude" / "settings.json"), "SessionStart")[0]) == {
        "type",
        "command",
        "timeout",
    }
    assert "cognitive-memory" in load(tmp_path / ".mcp.json")["mcpServers"]


def test_dry_run_shows_the_change_and_writes_nothing(project: Path) -> None:
    before = sorted((p.name, p.read_bytes()) for p in project.rglob("*") if p.is_file())

    result = setup("--project-dir", str(project), "--dry-run")

    assert result.exit_code == 0, result.output
    assert f"+++ {project / '.mcp.json'} (after)" in result.output
    assert "hook user-prompt-submit" in result.output and '+    "cognitive-memory": {' in result.output
    assert result.output.endswith("Dry run: nothing was written.\n")
    assert sorted((p.name, p.read_bytes()) for p in project.rglob("*") if p.is_file()) == before


def test_remove_takes_out_only_ours(project: Path) -> None:
    settings_path, servers_path = project / ".claude" / "settings.json", project / ".mcp.json"
    assert setup("--project-dir", str(project)).exit_code == 0

    removed = setup("--project-dir", str(project), "--remove")
    again = setup("--project-dir", str(project), "--remove")

    assert removed.exit_code == 0 and again.exit_code == 0, removed.output + again.output
    assert (load(settings_path), load(servers_path)) == (THEIR_SETTINGS, THEIR_SERVERS)
    assert "Nothing to remove" in again.output


def test_remove_drops_the_containers_it_empties(tmp_path: Path) -> None:
    assert setup("--project-dir", str(tmp_path)).exit_code == 0

    assert setup("--project-dir", str(tmp_path), "--remove").exit_code == 0

    assert load(tmp_path / ".claude" / "settings.json") == {}
    assert load(tmp_path / ".mcp.json") == {}


def test_an_older_install_of_ours_is_replaced_where_it_was(project: Path) -> None:
    settings_path = project / ".claude" / "settings.json"
    old = {"type": "command", "command": "'/old venv/bin/memory_system' hook session-start", "timeout": 5}
    theirs = {"hooks": [{"type": "command", "command": "./welcome.sh"}]}
    write(
        settings_path,
        {"hooks": {"SessionStart": [{"hooks": [old, {"type": "command", "command": "date"}]}, theirs]}},
    )

    assert setup("--project-dir", str(project)).exit_code == 0

    groups = load(settings_path)["hooks"]["SessionStart"]
    assert groups[0]["hooks"][0]["command"].endswith(f"{EXECUTABLE} hook session-start")
    assert groups[1:] == [{"hooks": [{"type": "command", "command": "date"}]}, theirs]


def test_user_scope_writes_the_user_settings_and_claude_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    write(home / ".claude.json", {"numStartups": 12, "projects": {"/src/shop": {"mcpServers": {}}}})

    result = setup("--user")

    assert result.exit_code == 0, result.output
    assert result.output.endswith("Restart Claude Code to load them.\n")
    state = load(home / ".claude.json")
    assert (state["numStartups"], state["projects"]) == (12, {"/src/shop": {"mcpServers": {}}})
    assert state["mcpServers"]["cognitive-memory"]["command"] == EXECUTABLE
    assert len(ours(load(home / ".claude" / "settings.json"), "SessionEnd")) == 1


def test_without_a_data_dir_the_defaults_serve_and_the_file_mode_is_kept(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers_path = project / ".mcp.json"
    servers_path.chmod(0o600)
    monkeypatch.delenv("COGNITIVE_MEMORY_DATA_DIR")

    assert setup("--project-dir", str(project)).exit_code == 0

    entry = load(servers_path)["mcpServers"]["cognitive-memory"]
    assert "env" not in entry
    hook = ours(load(project / ".claude" / "settings.json"), "PreCompact")[0]
    assert hook["command"] == f"{EXECUTABLE} hook pre-compact"
    assert stat.S_IMODE(servers_path.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("file", "text", "problem"),
    [
        (".claude/settings.json", "{ not json", "is not valid JSON"),
        (".mcp.json", "[1, 2]", "does not hold a JSON object"),
        (".claude/settings.json", '{"hooks": []}', '"hooks" in'),
        (".claude/settings.json", '{"hooks": {"SessionEnd": {}}}', '"hooks"."SessionEnd" in'),
        (".mcp.json", '{"mcpServers": {"cognitive-memory": "x"}}', '"mcpServers"."cognitive-memory" in'),
    ],
)
def test_a_file_that_cannot_be_merged_is_refused_and_nothing_is_written(
    tmp_path: Path, file: str, text: str, problem: str
) -> None:
    (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / file).write_text(text)

    result = setup("--project-dir", str(tmp_path))

    assert result.exit_code == 1
    (line,) = result.output.splitlines()
    assert line.startswith("Error: ") and problem in line
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()) == [file]
    assert (tmp_path / file).read_text() == text


def test_project_dir_and_user_together_are_refused(tmp_path: Path) -> None:
    result = setup("--project-dir", str(tmp_path), "--user")

    assert result.exit_code == 1
    assert result.output == "Error: choose --project-dir DIR or --user, not both.\n"
    assert list(tmp_path.iterdir()) == []
