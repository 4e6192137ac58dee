"""A damaged embedded vector store: `doctor` names the fix and `doctor --repair` rebuilds it (issue #15)."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cognitive_memory.storage import SQLiteMemoryStore
from memory_system.cli import app
from tests.damaging import BAD_TEXT, DAMAGES, write_bad_row

runner = CliRunner()

FACTS = (
    "The staging cluster autoscaler never scales below three nodes.",
    "Invoices are generated on the first business day of each month.",
)


def garbage_in_the_wal(vectors: Path) -> None:
    for segment in (vectors / "wal").iterdir():
        with segment.open("r+b") as wal:
            wal.write(os.urandom(4096))


def garbage_in_the_config(vectors: Path) -> None:
    (vectors / "edge_config.json").write_bytes(os.urandom(256))


def segment_json_missing(vectors: Path) -> None:
    found = list(vectors.rglob("segment.json"))
    assert found
    for path in found:
        path.unlink()


@pytest.mark.parametrize("damage", [garbage_in_the_wal, garbage_in_the_config, segment_json_missing])
@pytest.mark.model
def test_doctor_repair_rebuilds_a_damaged_vector_store_from_sqlite(
    data_dir: Path, damage: Callable[[Path], None]
) -> None:
    for fact in FACTS:
        assert runner.invoke(app, ["store", fact]).exit_code == 0
    damage(data_dir / "vectors")

    diagnosed = runner.invoke(app, ["doctor", "--json"])
    assert diagnosed.exit_code == 1
    qdrant = {check["name"]: check for check in json.loads(diagnosed.output)["checks"]}["qdrant"]
    assert qdrant["status"] == "fail"
    assert f"The embedded vector store in {data_dir / 'vectors'} is damaged" in qdrant["detail"]
    assert "run `memory_system doctor --repair` to set it aside and rebuild it" in qdrant["detail"]

    repaired = runner.invoke(app, ["doctor", "--repair", "--json"])
    assert repaired.exit_code == 0, repaired.output
    checks = {check["name"]: check for check in json.loads(repaired.output)["checks"]}
    assert checks["qdrant"]["status"] == "warn"
    assert "the damaged store was set aside as" in checks["qdrant"]["detail"]
    assert "2 vectors written" in checks["repair"]["detail"]
    assert checks["counts"]["status"] == checks["round_trip"]["status"] == "ok"
    (kept,) = data_dir.glob("vectors.damaged-*")
    assert kept.is_dir()

    recalled = runner.invoke(app, ["recall", "how small can the staging cluster get?", "--json"])
    assert recalled.exit_code == 0, recalled.output
    core = json.loads(recalled.output)["memories"]["core"]
    assert core[0]["content"] == FACTS[0]
    assert json.loads(recalled.output).get("degraded") is not True
    assert runner.invoke(app, ["doctor"]).exit_code == 0


def _checks(output: str) -> dict[str, dict[str, str]]:
    return {check["name"]: check for check in json.loads(output)["checks"]}


@pytest.mark.parametrize("damage", list(DAMAGES))
@pytest.mark.model
def test_a_row_no_command_writes_is_named_by_doctor_and_set_aside_by_repair(
    data_dir: Path, damage: str
) -> None:
    """Issue #27: one imported line with the id "my-note-1" made every command on the data
    directory die with `ValueError: failed to parse my-note-1 as UUID`."""
    for fact in FACTS:
        assert runner.invoke(app, ["store", fact]).exit_code == 0
    database = data_dir / "cognitive_memory.db"
    with closing(SQLiteMemoryStore(database)) as memories:
        (like, *_) = next(memories.memories.batches())
    bad_id = write_bad_row(database, like, damage)

    assert runner.invoke(app, ["status"]).exit_code == 0
    stored = runner.invoke(app, ["store", "The payroll export runs every Friday at noon."])
    assert stored.exit_code == 0, stored.output
    recalled = runner.invoke(app, ["recall", "how small can the staging cluster get?", "--json"])
    assert recalled.exit_code == 0, recalled.output
    assert json.loads(recalled.output)["memories"]["core"][0]["content"] == FACTS[0]

    diagnosed = runner.invoke(app, ["doctor", "--json"])
    assert diagnosed.exit_code == 1
    rows = _checks(diagnosed.output)["rows"]
    assert rows["status"] == "fail"
    assert f"1 memory cannot be read or indexed ({bad_id!r}: " in rows["detail"]
    assert "`memory_system doctor --repair` sets them aside" in rows["detail"]

    repaired = runner.invoke(app, ["doctor", "--repair", "--json"])
    assert repaired.exit_code == 0, repaired.output
    checks = _checks(repaired.output)
    assert checks["rows"]["status"] == "warn"
    assert f"set aside 1 memory that could not be read or indexed ({bad_id!r}: " in checks["rows"]["detail"]
    assert "3 vectors written" in checks["repair"]["detail"]
    assert checks["counts"]["status"] == checks["round_trip"]["status"] == "ok"

    healthy = runner.invoke(app, ["doctor", "--json"])
    assert healthy.exit_code == 0, healthy.output
    assert (
        "1 memory set aside earlier, kept in the set_aside table" in _checks(healthy.output)["rows"]["detail"]
    )
    with closing(sqlite3.connect(database)) as conn:
        kept = conn.execute("SELECT id, content, problem, row FROM set_aside").fetchall()
    assert [(memory_id, content) for memory_id, content, _, _ in kept] == [(bad_id, BAD_TEXT)]
    assert json.loads(kept[0][3])["id"] == bad_id
