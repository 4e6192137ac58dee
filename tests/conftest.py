"""Shared fixtures: an isolated data directory for every test, one real model per run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cognitive_memory.encoding import HashEncoder, SentenceBertEncoder
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem

_ISOLATED_VARIABLES = (
    "QDRANT_URL",
    "QDRANT_API_KEY",
    "QDRANT_COLLECTION",
    "COGNITIVE_MEMORY_DB_PATH",
    "SENTENCE_BERT_MODEL",
    "COGNITIVE_MEMORY_ENCODER",
    "COGNITIVE_MEMORY_CACHE_DIR",
    "MCP_MAX_MEMORIES_PER_QUERY",
    "MCP_SESSION_LESSON_BOOST",
    "MCP_BRIDGE_DISCOVERY_THRESHOLD",
)


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own data directory and no stray configuration or .env file."""
    directory = tmp_path / "data"
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(directory))
    for name in _ISOLATED_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return directory


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def real_encoder() -> SentenceBertEncoder:
    """all-MiniLM-L6-v2, loaded once for the whole run."""
    encoder = SentenceBertEncoder()
    encoder.warm_up()
    return encoder


@pytest.fixture
def hash_system(data_dir: Path) -> Iterator[CognitiveSystem]:
    """A system on disk (SQLite + Qdrant Edge) with the deterministic hash encoder."""
    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    yield system
    system.close()


@pytest.fixture
def real_system(data_dir: Path, real_encoder: SentenceBertEncoder) -> Iterator[CognitiveSystem]:
    """A system on disk (SQLite + Qdrant Edge) with the real all-MiniLM-L6-v2 encoder."""
    system = build_system(Settings(env_file=None), encoder=real_encoder)
    yield system
    system.close()
