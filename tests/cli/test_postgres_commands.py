"""The commands on a PostgreSQL store of record (COGNITIVE_MEMORY_DATABASE_URL), through typer's
runner: a backup is a SQLite snapshot of the database (one read of it, counted), `restore` says
how to put one into PostgreSQL instead of putting a file in place, and `move-store` takes a
lived-in SQLite store into an empty database and back with the same rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cognitive_memory.encoding import HashEncoder
from cognitive_memory.main import build_system, open_store
from cognitive_memory.settings import Settings
from memory_system.cli import app

pytestmark = pytest.mark.postgres

runner = CliRunner()


def stored(texts: list[str]) -> None:
    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        for text in texts:
            system.store(text, session_id="team")
    finally:
        system.close()


def test_a_backup_of_the_database_is_a_sqlite_snapshot_and_restore_says_how_to_put_it_back(
    monkeypatch: pytest.MonkeyPatch, postgres_url: str, data_dir: Path
) -> None:
    monkeypatch.setenv("COGNITIVE_MEMORY_DATABASE_URL", postgres_url)
    stored(["The deploy window is Thursday at noon.", "Billing belongs to the payments team."])

    made = runner.invoke(app, ["backup", "--json"])
    refused = runner.invoke(app, ["restore", json.loads(made.stdout)["snapshot"]["path"]])

    assert made.exit_code == 0, made.output
    snapshot = json.loads(made.stdout)["snapshot"]
    assert snapshot["counts"]["memories"] == 2
    assert "move-store postgresql://" in snapshot["restore"]
    copy = open_store(str(Path(snapshot["path"]) / "cognitive_memory.db"))
    try:
        assert {m.content for batch in copy.memories.batches() for m in batch} == {
            "The deploy window is Thursday at noon.",
            "Billing belongs to the payments team.",
        }
    finally:
        copy.close()
    assert refused.exit_code == 1
    assert refused.output.startswith(
        "Error: restore puts a SQLite file in place; the store here is PostgreSQL."
    )


def test_a_sqlite_store_moved_into_postgresql_and_back_keeps_every_row(
    monkeypatch: pytest.MonkeyPatch, postgres_url: str, data_dir: Path, tmp_path: Path
) -> None:
    stored([f"Fact {n} about the release train." for n in range(12)])

    into = runner.invoke(app, ["move-store", postgres_url, "--json"])
    again = runner.invoke(app, ["move-store", postgres_url])
    monkeypatch.setenv("COGNITIVE_MEMORY_DATABASE_URL", postgres_url)
    back = runner.invoke(app, ["move-store", str(tmp_path / "back.db"), "--json"])

    assert into.exit_code == 0, into.output
    moved = json.loads(into.output)
    assert moved["rows"]["memories"] == 12 and moved["rows"]["connections"] > 0
    assert "password" not in moved["target"] and moved["target"].startswith("postgresql://")
    assert again.exit_code == 1 and "already holds 12 memories" in again.output
    assert back.exit_code == 0, back.output
    assert json.loads(back.output)["rows"] == moved["rows"]
