"""The hook commands `setup claude-code` writes: real shell commands, recognised as ours again."""

from __future__ import annotations

import subprocess
from pathlib import Path

from memory_system.claude_setup import desired_hooks, with_hooks, without_hooks


def test_a_hook_command_with_spaces_in_its_paths_runs_in_a_shell_and_is_recognised(tmp_path: Path) -> None:
    executable = tmp_path / "my tools" / "memory_system"
    executable.parent.mkdir()
    executable.write_text('#!/bin/sh\necho "$COGNITIVE_MEMORY_DATA_DIR|$1|$2"\n')
    executable.chmod(0o755)
    hooks = desired_hooks(str(executable), str(tmp_path / "data dir"))
    command = hooks["SessionStart"]["hooks"][0]["command"]

    ran = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=30, check=True)
    merged = with_hooks({"hooks": {"SessionStart": [hooks["SessionStart"]]}}, hooks, tmp_path)

    assert ran.stdout == f"{tmp_path / 'data dir'}|hook|session-start\n"
    assert merged["hooks"]["SessionStart"] == [hooks["SessionStart"]]  # recognised: not added twice
    assert without_hooks(merged, tmp_path) == {}


def test_a_command_that_only_mentions_the_name_is_not_ours(tmp_path: Path) -> None:
    theirs = {"hooks": [{"type": "command", "command": "echo 'memory_system hooks are set up'"}]}
    settings = {"hooks": {"SessionEnd": [theirs]}}

    assert without_hooks(settings, tmp_path) == settings
