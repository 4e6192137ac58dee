"""`move-store` through typer's runner: a lived-in store (keys, sessions, versions, named links,
trash, a loaded markdown tree) copied into a new SQLite file holds the same rows and ranks the
same; a target that exists, the store itself, and an unusable target are refused with one line."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cognitive_memory.core.records import MemoryEdit
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.lifecycle.forgetting import trash
from cognitive_memory.linking import link
from cognitive_memory.loaders import load_markdown
from cognitive_memory.main import build_system, open_store
from cognitive_memory.settings import Settings
from cognitive_memory.storage.moving import COPIED
from cognitive_memory.system import CognitiveSystem
from memory_system.cli import app

runner = CliRunner()
QUERIES = ["deploy window", "billing service owner", "release notes", "staging cluster region"]


def lived_in(data_dir: Path) -> None:
    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        ids = [
            system.store(text, session_id="s1").memory.id
            for text in (
                "The deploy window is Tuesday at noon.",
                "The billing service is owned by the payments team.",
                "Release notes go out on Fridays.",
                "The staging cluster moved to the Frankfurt region.",
            )
        ]
        system.store("The coding style is tabs.", key="coding-style")
        system.store("The coding style is four spaces.", key="coding-style")  # a version
        system.edits.update(ids[0], MemoryEdit(text="The deploy window is Thursday at noon."))
        link(system.records, ids[1], ids[2], "depends_on", note="payments ship notes")
        forgotten = system.store("The office plants are watered on Fridays.").memory.id
        trash(system, [forgotten], "forgotten", None)
        notes = data_dir.parent / "notes"
        notes.mkdir()
        (notes / "ops.md").write_text(
            "# Ops\n\nThe staging cluster is patched monthly.\n\n## On call\n\nOn call rotates weekly.\n"
        )
        load_markdown(system.loaded, notes)
        system.retrieve("deploy window")  # uses, co-recall links
        system.flush()
    finally:
        system.close()


def rows(location: Path) -> dict[str, list[tuple[object, ...]]]:
    store = open_store(str(location))
    try:
        from cognitive_memory.storage.sqlite_store import SQLiteMemoryStore

        assert isinstance(store, SQLiteMemoryStore)
        return {
            table: sorted(
                (
                    tuple(row)
                    for row in store.database.rows(f"SELECT * FROM {table}")
                    if table != "store_meta" or row[0] not in ("store_id", "change_log_trimmed")
                ),
                key=repr,
            )
            for table, _ in COPIED
        }
    finally:
        store.close()


def rankings(
    monkeypatch: pytest.MonkeyPatch, data_dir: Path, database: Path
) -> list[list[tuple[str, float]]]:
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(data_dir))
    monkeypatch.setenv("COGNITIVE_MEMORY_DB_PATH", str(database))
    system: CognitiveSystem = build_system(
        Settings(env_file=None), encoder=HashEncoder(), clock=lambda: FIXED
    )
    try:
        if system.index_follower is not None:  # the store is outside this data directory
            system.index_follower.catch_up()
        ranked = []
        for query in QUERIES:
            vector = system.encoder.encode([query])[0]
            found = system.retriever.retrieve(query, vector, max_results=10, include_bridges=True, now=FIXED)
            ranked.append([(r.memory.id, round(r.score.total, 9)) for r in (*found.core, *found.peripheral)])
        return ranked
    finally:
        system.close()


FIXED = datetime(2027, 1, 1, tzinfo=UTC)


def test_a_lived_in_store_moved_to_a_new_file_holds_the_same_rows_and_ranks_the_same(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lived_in(data_dir)
    source = data_dir / "cognitive_memory.db"
    target = tmp_path / "moved" / "memories.db"

    moved = runner.invoke(app, ["move-store", str(target), "--json"])

    assert moved.exit_code == 0, moved.output
    body = json.loads(moved.output)
    assert body["rows"]["memories"] == 6 and body["rows"]["trash"] == 1
    assert body["rows"]["memory_versions"] >= 2 and body["rows"]["relations"] == 1
    assert body["rows"]["sources"] == 1 and body["rows"]["source_chunks"] == 1
    assert f"COGNITIVE_MEMORY_DB_PATH={target}" in moved.output
    assert rows(target) == rows(source)
    before = rankings(monkeypatch, tmp_path / "index-a", source)
    after = rankings(monkeypatch, tmp_path / "index-b", target)
    assert after == before and sum(map(len, before)) >= 3


def test_a_target_that_exists_or_is_the_store_itself_is_refused(data_dir: Path, tmp_path: Path) -> None:
    lived_in(data_dir)
    existing = tmp_path / "notes.txt"
    existing.write_text("not a store")

    over_a_file = runner.invoke(app, ["move-store", str(existing)])
    onto_itself = runner.invoke(app, ["move-store", str(data_dir / "cognitive_memory.db")])

    assert over_a_file.exit_code == 1 and existing.read_text() == "not a store"
    assert over_a_file.output.startswith(
        f"Error: {existing} exists: move into a SQLite file that does not exist yet"
    )
    assert onto_itself.exit_code == 1
    assert onto_itself.output.startswith("Error: The store is already at ")


def test_a_target_that_cannot_be_made_is_refused_in_one_line(data_dir: Path, tmp_path: Path) -> None:
    lived_in(data_dir)
    in_the_way = tmp_path / "afile"
    in_the_way.write_text("a file where a directory should be")

    refused = runner.invoke(app, ["move-store", str(in_the_way / "memories.db")])

    assert refused.exit_code == 1 and refused.output.startswith("Error: Cannot open"), refused.output
    assert "is a file, not a directory" in refused.output and "Traceback" not in refused.output
    assert in_the_way.read_text() == "a file where a directory should be"
