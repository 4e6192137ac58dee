"""A damaged embedded vector store: `doctor` names the fix and `doctor --repair` rebuilds it (issue #15)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memory_system.cli import app

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
