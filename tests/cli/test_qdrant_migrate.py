"""`memory_system qdrant migrate --to URL`: SQLite's vectors copied, verified, nothing re-embedded.

No Qdrant server runs here: the command's connection is pointed at ``QdrantClient(path=...)``,
which speaks the same client API (as tests/integration/test_vector_stores.py does).
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from qdrant_client import QdrantClient
from typer.testing import CliRunner

from cognitive_memory.encoding import HashEncoder
from cognitive_memory.index import VectorPoint
from cognitive_memory.index.qdrant_store import QdrantServerVectorStore
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from cognitive_memory.storage import SQLiteMemoryStore
from memory_system.cli import app

runner = CliRunner()
URL = "http://qdrant.example:6333"


@pytest.fixture
def stored(data_dir: Path) -> list[str]:
    """1,234 memories stored with the hash encoder; returns their ids."""
    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        outcomes = system.store_many([f"memory number {n} about topic {n % 17}" for n in range(1234)])
        return [outcome.memory.id for outcome in outcomes]
    finally:
        system.close()


@pytest.fixture
def local_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Route the command's connection to an on-disk qdrant-client store; yields its path."""
    path = tmp_path / "qdrant-local"
    connected: list[str] = []

    def connect(url: str, api_key: str | None, collection: str, dimension: int = 384) -> Any:
        connected.append(url)
        return QdrantServerVectorStore(QdrantClient(path=str(path)), collection, url, dimension)

    monkeypatch.setattr(QdrantServerVectorStore, "connect", staticmethod(connect))
    yield path
    assert set(connected) <= {URL}


def _target(path: Path, collection: str = "cognitive_memory") -> QdrantServerVectorStore:
    return QdrantServerVectorStore(QdrantClient(path=str(path)), collection, "local")


def test_migrate_copies_every_vector_unchanged_and_says_how_to_use_it(
    stored: list[str], local_server: Path, data_dir: Path
) -> None:
    result = runner.invoke(app, ["qdrant", "migrate", "--to", URL])
    assert result.exit_code == 0, result.output
    assert "Copied 1234 vectors" in result.stdout
    assert f"QDRANT_URL={URL}" in result.stdout
    assert "copied 1234/1234" in result.stderr
    memories = SQLiteMemoryStore(data_dir / "cognitive_memory.db")
    client = QdrantClient(path=str(local_server))
    try:
        assert client.count("cognitive_memory", exact=True).count == 1234
        kept = memories.memories.vectors(stored[::100])
        copied = client.retrieve("cognitive_memory", list(kept), with_vectors=True)
        assert len(copied) == len(kept) == 13
        for record in copied:
            # The dense vector unnamed, the memory's words beside it (index/sparse.py).
            assert isinstance(record.vector, dict) and set(record.vector) == {"", "words"}
            dense = np.asarray(record.vector[""], dtype=np.float32)
            assert np.allclose(dense, kept[str(record.id)], atol=1e-6)
    finally:
        client.close()
        memories.close()


def test_migrate_removes_points_sqlite_does_not_know(stored: list[str], local_server: Path) -> None:
    target = _target(local_server, "elsewhere")
    stray = np.zeros(384, dtype=np.float32)
    stray[0] = 1.0
    target.upsert([VectorPoint("00000000-0000-0000-0000-000000000001", stray, {})])
    target.close()
    result = runner.invoke(app, ["qdrant", "migrate", "--to", URL, "--collection", "elsewhere"])
    assert result.exit_code == 0, result.output
    assert "1 stale points removed" in result.stdout
    assert "QDRANT_COLLECTION=elsewhere" in result.stdout
    target = _target(local_server, "elsewhere")
    try:
        assert target.count() == 1234
    finally:
        target.close()


@pytest.mark.parametrize("url", ["localhost:6333", "ftp://host", "not a url"])
def test_migrate_refuses_a_malformed_url_in_one_line(url: str) -> None:
    result = runner.invoke(app, ["qdrant", "migrate", "--to", url])
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: --to must be a Qdrant server URL")
    assert "Traceback" not in result.output


def test_migrate_reports_an_unreachable_server_in_one_line(stored: list[str]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = runner.invoke(app, ["qdrant", "migrate", "--to", f"http://127.0.0.1:{port}"])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: Migration to http://127.0.0.1:{port} failed")
    assert "Traceback" not in result.output


def test_migrate_without_a_database_says_there_is_nothing_to_copy() -> None:
    result = runner.invoke(app, ["qdrant", "migrate", "--to", URL])
    assert result.exit_code == 1
    assert "No memories to migrate" in result.stderr


def test_migrate_copies_the_rest_and_names_a_memory_the_server_cannot_take(
    stored: list[str], local_server: Path, data_dir: Path
) -> None:
    from tests.damaging import write_bad_row

    database = data_dir / "cognitive_memory.db"
    memories = SQLiteMemoryStore(database)
    try:
        (like,) = memories.memories.get(stored[:1])
    finally:
        memories.close()
    write_bad_row(database, like, "id not a UUID")

    result = runner.invoke(app, ["qdrant", "migrate", "--to", URL])

    assert result.exit_code == 0, result.output
    assert "Copied 1234 vectors" in result.stdout
    assert "1 memory was left out: 'my-note-1' (its id 'my-note-1' is not a UUID" in result.stderr
    assert "`memory_system doctor --repair` sets it aside" in result.stderr
