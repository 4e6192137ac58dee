"""Shared fixtures: an isolated data directory for every test, one real model per run; and the
markers that split the suite into tiers.

`make test` runs everything. `make test-fast` leaves out the tests marked (see FAST_TIER in the
Makefile) ``model`` (the real encoder), ``subprocess`` (a child process other than git or sh),
``browser`` (Chromium), ``slow`` (over a second for another reason) and ``legacy_protocol`` (the
second run of an MCP test, in the older protocol era). ``model``, ``browser`` and
``legacy_protocol`` are put on by `pytest_collection_modifyitems` from the fixtures a test uses;
``subprocess`` and ``slow`` are written on the test. When a run leaves out ``model`` or
``subprocess``, a test that loads the model or starts a process without its marker fails, so a
missing marker is found, not silently paid for.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cognitive_memory.encoding import HashEncoder, SentenceBertEncoder
from cognitive_memory.encoding.onnx_model import OnnxModel
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


# --- tiers ----------------------------------------------------------------------------------

_CHEAP_PROGRAMS = frozenset({"git", "sh"})  # milliseconds each: the fast tier may start them


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Markers from facts: the fixtures a test uses and the protocol era it runs in."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if "real_encoder" in fixtures:
            item.add_marker(pytest.mark.model)
        if fixtures & {"browser", "live_server"}:
            item.add_marker(pytest.mark.browser)
        if "live_server" in fixtures:
            item.add_marker(pytest.mark.subprocess)
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("client") == "legacy":
            item.add_marker(pytest.mark.legacy_protocol)


def _left_out(config: pytest.Config, marker: str) -> bool:
    return f"not {marker}" in (config.getoption("markexpr") or "")


def _program(args: Any) -> str:
    first = args if isinstance(args, (str, bytes, os.PathLike)) else next(iter(args), "")
    return Path(os.fsdecode(first)).name


@pytest.fixture(autouse=True)
def tier_guard(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """In a run that leaves out ``subprocess`` or ``model``, fail a test that needs the marker."""
    config, node = request.config, request.node
    found: dict[str, str] = {}  # what the test did -> the marker it needs
    if _left_out(config, "subprocess") and node.get_closest_marker("subprocess") is None:
        popen_init = subprocess.Popen.__init__

        def watched_popen(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
            program = _program(args)
            if program not in _CHEAP_PROGRAMS:
                found[f"started the child process {program}"] = "subprocess"
            popen_init(self, args, *rest, **kwargs)

        monkeypatch.setattr(subprocess.Popen, "__init__", watched_popen)
    if _left_out(config, "model") and node.get_closest_marker("model") is None:
        sbert_load, onnx_init = SentenceBertEncoder._load, OnnxModel.__init__

        def watched_sbert(self: SentenceBertEncoder) -> Any:
            found["loaded the real model"] = "model"
            return sbert_load(self)

        def watched_onnx(self: OnnxModel, *args: Any, **kwargs: Any) -> None:
            found["loaded the real model"] = "model"
            onnx_init(self, *args, **kwargs)

        monkeypatch.setattr(SentenceBertEncoder, "_load", watched_sbert)
        monkeypatch.setattr(OnnxModel, "__init__", watched_onnx)
    yield
    if found:
        needed = " and ".join(f"@pytest.mark.{marker}" for marker in sorted(set(found.values())))
        pytest.fail(
            f"This test {', '.join(found)}: mark it {needed} so that `make test-fast` leaves it out.",
            pytrace=False,
        )
