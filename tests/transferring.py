"""Export and import through typer's runner, shared by the transfer command tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cognitive_memory.encoding import HashEncoder
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem
from memory_system.cli import app

runner = CliRunner()


def opened(directory: Path, monkeypatch: pytest.MonkeyPatch) -> CognitiveSystem:
    """The system of the data directory ``directory``, over the hash encoder."""
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(directory))
    return build_system(Settings(env_file=None), encoder=HashEncoder())


def invoke(*args: str, input: str | None = None) -> Any:
    """Run a `memory_system` command that must succeed."""
    result = runner.invoke(app, list(args), input=input)
    assert result.exit_code == 0, result.output
    return result


def imported(*args: str, input: str | None = None) -> dict[str, Any]:
    """The JSON summary of a successful `memory_system import`."""
    return dict(json.loads(invoke("import", *args, "--json", input=input).stdout))
