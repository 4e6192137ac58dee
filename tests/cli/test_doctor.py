"""memory_system doctor through typer's runner, and the index rebuild behind ``--repair``."""

from __future__ import annotations

import json
import stat
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from qdrant_client import QdrantClient
from typer.testing import CliRunner

from cognitive_memory.encoding import HashEncoder, SentenceBertEncoder
from cognitive_memory.index import ArrayVectorStore, EdgeVectorStore, VectorFilter, VectorPoint, VectorStore
from cognitive_memory.index.qdrant_store import QdrantServerVectorStore
from cognitive_memory.main import build_system
from cognitive_memory.retrieval import RetrievalConfig, Retriever
from cognitive_memory.settings import Settings
from cognitive_memory.storage import SQLiteMemoryStore
from cognitive_memory.system import CognitiveSystem
from memory_system.cli import app

runner = CliRunner()

ALL_CHECKS = [
    "config",
    "data_dir",
    "sqlite",
    "qdrant",
    "model",
    "rows",
    "sources",
    "counts",
    "words",
    "round_trip",
]


def _lines(output: str) -> dict[str, str]:
    """Check name -> status word, from the text report."""
    rows = [line.split(maxsplit=2) for line in output.splitlines() if line[:4] in ("OK  ", "WARN", "FAIL")]
    return {row[1]: row[0] for row in rows}


@pytest.mark.model
def test_doctor_passes_on_a_fresh_data_directory_and_leaves_nothing_behind(data_dir: Path) -> None:
    result = runner.invoke(app, ["doctor", "--json"])

    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["ok"] is True
    assert [(c["name"], c["status"]) for c in report["checks"]] == [(name, "ok") for name in ALL_CHECKS]
    memories = SQLiteMemoryStore(data_dir / "cognitive_memory.db")
    vectors = EdgeVectorStore(data_dir / "vectors")
    try:
        assert (memories.memories.counts().total, vectors.count(), memories.outbox.pending()) == (0, 0, [])
    finally:
        vectors.close()
        memories.close()


@pytest.mark.model
def test_doctor_makes_a_new_data_directory_closed_and_warns_of_an_open_one(data_dir: Path) -> None:
    # doctor, often the first command, made the directory 0755; and it said nothing of an open one.
    first = runner.invoke(app, ["doctor"])
    assert first.exit_code == 0, first.output
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700

    data_dir.chmod(0o755)
    warned = runner.invoke(app, ["doctor"])

    assert warned.exit_code == 0, warned.output
    assert _lines(warned.output)["data_dir"] == "WARN"
    assert "has mode 0755: other users can read the memory database" in warned.output
    assert f"chmod 700 {data_dir}" in warned.output


def test_doctor_fails_clearly_when_the_data_directory_is_a_file(data_dir: Path) -> None:
    data_dir.write_text("not a directory")

    result = runner.invoke(app, ["doctor"])

    assert result.exit_code == 1
    assert f"FAIL  data_dir    {data_dir} is a file, not a directory" in result.output
    assert "COGNITIVE_MEMORY_DATA_DIR" in result.output
    assert _lines(result.output)["round_trip"] == "WARN"
    assert "skipped: needs data_dir" in result.output
    assert "Traceback" not in result.output


def test_counts_that_disagree_fail_until_repair_rebuilds_the_index(
    data_dir: Path, real_encoder: SentenceBertEncoder
) -> None:
    system = build_system(Settings(env_file=None), encoder=real_encoder)
    kept = system.store("Release builds are signed on the air-gapped laptop.").memory.id
    lost = system.store("The staging database is refreshed from production every Sunday.").memory.id
    system.vectors.delete([lost])
    system.close()

    broken = runner.invoke(app, ["doctor"])
    # The round trip's store weighs its neighbours' words again (in a store this small, every
    # memory's: the average length drifts), and a point the index lacks is written whole: the
    # lost one came back. Lose it again, so the repair has it to rebuild.
    _lose_vector(lost, real_encoder)
    repaired = runner.invoke(app, ["doctor", "--repair"])
    healthy = runner.invoke(app, ["doctor"])

    assert broken.exit_code == 1
    assert (
        "FAIL  counts      2 memories in the database, 1 vector in the index, 0 writes queued"
        in broken.output
    )
    assert "memory_system doctor --repair" in broken.output
    assert repaired.exit_code == 0, repaired.output
    assert "OK    repair      rebuilt the index from SQLite" in repaired.output
    assert "2 vectors written (1 -> 2)" in repaired.output
    assert healthy.exit_code == 0, healthy.output
    assert _lines(healthy.output) == dict.fromkeys(ALL_CHECKS, "OK")
    assert healthy.output.rstrip().endswith("10 checks: 0 failed, 0 warnings")
    reopened = build_system(Settings(env_file=None), encoder=real_encoder)
    try:
        query = reopened.encoder.encode(["when is staging refreshed?"])[0]
        assert reopened.vectors.search(query, 1)[0].id == lost
        assert {hit.id for hit in reopened.vectors.search(query, 5)} == {kept, lost}
    finally:
        reopened.close()


def _lose_vector(memory_id: str, encoder: SentenceBertEncoder) -> None:
    system = build_system(Settings(env_file=None), encoder=encoder)
    try:
        system.vectors.delete([memory_id])
    finally:
        system.close()


@pytest.mark.slow
def test_a_store_held_by_another_process_fails_the_qdrant_check(data_dir: Path) -> None:
    holder = EdgeVectorStore(data_dir / "vectors")
    try:
        result = runner.invoke(app, ["doctor"])
    finally:
        holder.close()

    assert result.exit_code == 1
    assert "FAIL  qdrant      The vector store is held by another process" in result.output
    assert "held by another process that does not answer" in result.output
    assert {_lines(result.output)[name] for name in ("model", "counts", "round_trip")} == {"WARN"}
    assert "Traceback" not in result.output


@pytest.mark.model
def test_secrets_never_appear_in_the_report(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QDRANT_API_KEY", "supersecretvalue")

    text = runner.invoke(app, ["doctor"])
    as_json = runner.invoke(app, ["doctor", "--json"])

    for result in (text, as_json):
        assert result.exit_code == 0, result.output
        assert "supersecretvalue" not in result.output
        assert "QDRANT_API_KEY=****ue" in result.output
    assert _lines(text.output)["config"] == "WARN"
    assert "QDRANT_API_KEY is unused without QDRANT_URL" in text.output


def test_an_invalid_setting_fails_the_config_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_MAX_MEMORIES_PER_QUERY", "lots")

    result = runner.invoke(app, ["doctor"])

    assert result.exit_code == 1
    assert "FAIL  config      Invalid setting MCP_MAX_MEMORIES_PER_QUERY='lots'" in result.output
    assert "Traceback" not in result.output


def _vector_store(kind: str, tmp_path: Path) -> VectorStore:
    if kind == "edge":
        return EdgeVectorStore(tmp_path / "edge")
    if kind == "qdrant-client":
        return QdrantServerVectorStore(QdrantClient(path=str(tmp_path / "qc")), "memories", "local")
    return ArrayVectorStore()


@pytest.fixture(params=["edge", "qdrant-client", "array"])
def any_system(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[CognitiveSystem]:
    """A system with the hash encoder over each of the three vector stores."""
    memories = SQLiteMemoryStore(tmp_path / "memories.db")
    vectors = _vector_store(request.param, tmp_path)
    system = CognitiveSystem(
        memories, vectors, HashEncoder(), Retriever(memories, vectors, RetrievalConfig())
    )
    yield system
    system.close()


def test_rebuild_index_restores_missing_vectors_and_drops_unknown_points(any_system: CognitiveSystem) -> None:
    system = any_system
    stored = [system.store(f"note {i} about the build", tags=[f"t{i}"]).memory for i in range(3)]
    system.vectors.delete([stored[0].id])
    unindexed = replace(stored[1], id=str(uuid.uuid4()), session_id=None)
    system.records.memories.add([unindexed])  # in SQLite with a queued outbox row, not in the index
    stored.append(unindexed)
    stray = np.ones(384, dtype=np.float32) / np.sqrt(384)
    system.vectors.upsert([VectorPoint(str(uuid.uuid4()), stray, {})])

    written = system.rebuild_index()

    assert written == 4
    assert sorted(system.vectors.ids()) == sorted(m.id for m in stored)
    assert system.records.outbox.pending() == []
    vector = stored[0].cognitive_embedding
    assert vector is not None
    assert [hit.id for hit in system.vectors.search(vector, 3, VectorFilter(tags=("t0",)))] == [stored[0].id]


@pytest.mark.model
def test_a_device_the_machine_lacks_fails_the_model_check_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COGNITIVE_MEMORY_DEVICE", "cuda:97")  # no machine has 98 GPUs

    result = runner.invoke(app, ["doctor"])

    assert result.exit_code == 1
    (model,) = [line for line in result.output.splitlines() if line.startswith("FAIL  model")]
    assert "COGNITIVE_MEMORY_DEVICE=cuda:97: use cpu" in model
    assert "Traceback" not in result.output


@pytest.mark.model
def test_a_qdrant_server_that_is_down_fails_its_check_and_the_model_is_still_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("QDRANT_URL", f"http://127.0.0.1:{port}")

    result = runner.invoke(app, ["doctor"])

    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert any(line.startswith("FAIL  qdrant") and "Connection refused" in line for line in lines)
    assert any(line.startswith("OK    model") for line in lines)
    assert "Traceback" not in result.output
