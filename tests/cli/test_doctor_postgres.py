"""memory_system doctor on a PostgreSQL store of record: the database check reads the server (its
version, the migrations, the rights) and names it without the password; an unreachable server
fails the check in one line and skips what needs it."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cognitive_memory.settings import Settings
from cognitive_memory.storage.migrations import MIGRATIONS
from cognitive_memory.upkeep.health import CheckResult
from cognitive_memory.upkeep.vectors import open_system
from memory_system.cli import app

runner = CliRunner()


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_database_fails_its_check_without_the_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = f"postgresql://team:hunter2-secret@127.0.0.1:{closed_port()}/memory"
    monkeypatch.setenv("COGNITIVE_MEMORY_DATABASE_URL", url)

    result = runner.invoke(app, ["doctor"])

    assert result.exit_code == 1
    assert "hunter2" not in result.output
    lines = result.output.splitlines()
    database = next(line for line in lines if line.split()[1:2] == ["database"])
    assert database.startswith("FAIL  database    Cannot reach postgresql://team@127.0.0.1:")
    assert "WARN  model       skipped: needs database, which failed" in lines
    assert "sqlite" not in result.output.split("database=")[0]


@pytest.mark.postgres
@pytest.mark.model
def test_every_check_passes_on_a_new_database_and_then_on_the_store_it_made(
    monkeypatch: pytest.MonkeyPatch, postgres_url: str
) -> None:
    monkeypatch.setenv("COGNITIVE_MEMORY_DATABASE_URL", postgres_url)

    new = runner.invoke(app, ["doctor"])
    stored = runner.invoke(app, ["store", "The team's deploy window is Thursday at noon."])
    made = runner.invoke(app, ["doctor"])

    assert new.exit_code == 0, new.output
    assert "OK    database    PostgreSQL 15" in new.output
    assert "a new database, its tables made on first use" in new.output
    assert stored.exit_code == 0, stored.output
    assert made.exit_code == 0, made.output
    assert f"{len(MIGRATIONS)} migrations" in made.output and "OK    round_trip" in made.output
    assert "OK    counts      1 memory in the database, 1 vector in the index" in made.output


def test_a_store_of_record_that_fails_to_open_is_named_the_database_not_the_index(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    url = f"postgresql://team:hunter2-secret@127.0.0.1:{closed_port()}/memory"
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("COGNITIVE_MEMORY_DATABASE_URL", url)

    failed = open_system(Settings(env_file=None))

    assert isinstance(failed, CheckResult)
    assert (failed.name, failed.status) == ("database", "fail")
    assert "hunter2" not in failed.detail
