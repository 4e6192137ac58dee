"""Shared fixtures: an isolated data directory for every test, one real model per run; and the
markers that split the suite into tiers.

`make test` runs everything. `make test-fast` leaves out the tests marked (see FAST_TIER in the
Makefile) ``model`` (the real encoder), ``subprocess`` (a child process other than git or sh),
``browser`` (Chromium), ``slow`` (over a second for another reason) and ``legacy_protocol`` (the
second run of an MCP test, in the older protocol era). ``model``, ``browser`` and
``legacy_protocol`` are put on by `pytest_collection_modifyitems` from the fixtures a test uses;
``subprocess`` and ``slow`` are written on the test. ``postgres`` (a PostgreSQL server) is put on
from the fixture too; the fast tier keeps it, since its throwaway server starts in about a second
per test process (tests/fixtures/postgres.py); a test marked ``stores`` runs on SQLite and on
PostgreSQL (``store_of_record``, see docs/development.md). When a run leaves out ``model`` or
``subprocess``, a test that loads the model or starts a process without its marker fails, so a
missing marker is found, not silently paid for.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.testing

from cognitive_memory.encoding import HashEncoder, SentenceBertEncoder
from cognitive_memory.encoding.onnx_model import OnnxModel
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem

pytest_plugins = ["tests.fixtures.postgres"]

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
    "COGNITIVE_MEMORY_WORDS",
    "COGNITIVE_MEMORY_DATABASE_URL",
)


# Where there is a tmpfs with this much room, the temporary directories go there (see pytest_configure).
_TMPFS = Path("/dev/shm")
_TMPFS_ROOM = 2 * 1024**3


def pytest_configure(config: pytest.Config) -> None:
    """Put the tests' temporary directories (tmp_path, so every data directory) on a tmpfs when
    one has room: SQLite and Qdrant Edge then run as on disk, but their fsyncs cost nothing, and
    creating an Edge shard drops from a large part of a second to a few milliseconds. A given
    ``--basetemp`` or ``PYTEST_DEBUG_TEMPROOT`` wins (``PYTEST_DEBUG_TEMPROOT=/tmp`` runs on disk)."""
    if config.option.basetemp or "PYTEST_DEBUG_TEMPROOT" in os.environ:
        return
    try:
        roomy = shutil.disk_usage(_TMPFS).free >= _TMPFS_ROOM and os.access(_TMPFS, os.W_OK | os.X_OK)
    except OSError:
        return
    if roomy:
        os.environ["PYTEST_DEBUG_TEMPROOT"] = str(_TMPFS)


def pytest_sessionstart(session: pytest.Session) -> None:
    """typer's CliRunner builds the whole click command tree of `memory_system` again at every
    invoke; the tree is the same each time, so it is built once per app, as a process does."""
    typer.testing._get_command = functools.cache(typer.testing._get_command)


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


# --- the store of record ------------------------------------------------------------------------

# The stores of record a test marked ``stores`` runs on, each a test of its own (pytest_generate_tests).
STORES = ("sqlite", "postgres")


@pytest.fixture
def store_of_record(request: pytest.FixtureRequest, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The store of record that the systems a test builds from the settings open: ``sqlite`` (the
    file in the data directory), or ``postgres``: a fresh database with the store's tables on the
    test process's throwaway server (tests/fixtures/postgres.py), named by
    COGNITIVE_MEMORY_DATABASE_URL. SQLite unless the test is marked ``stores`` (then each of the
    stores the marker names, both by default)."""
    kind = str(getattr(request, "param", "sqlite"))
    if kind == "postgres":
        monkeypatch.setenv("COGNITIVE_MEMORY_DATABASE_URL", request.getfixturevalue("postgres_store_url"))
    return kind


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test marked ``stores`` that builds a system from the settings runs once per store of
    record, ``[sqlite]`` and ``[postgres]``; ``@pytest.mark.stores("sqlite", reason=...)`` keeps a
    test about what only SQLite has (FTS5's words, the file itself) on SQLite, and says why. A
    test with the real model runs on SQLite alone: what it is about is the ranking, which the
    store does not change, and the model tests are the suite's slowest."""
    marker = metafunc.definition.get_closest_marker("stores")
    if marker is None or "store_of_record" not in metafunc.fixturenames:
        return
    kinds = marker.args or STORES
    unknown = set(kinds) - set(STORES)
    if unknown or (set(kinds) != set(STORES) and not marker.kwargs.get("reason")):
        raise pytest.UsageError(
            f"{metafunc.definition.nodeid}: @pytest.mark.stores takes stores of {STORES}, and a "
            "reason=... when it leaves one out."
        )
    if "real_encoder" in metafunc.fixturenames or metafunc.definition.get_closest_marker("model"):
        kinds = ("sqlite",)
    on_server = pytest.mark.postgres
    params = [pytest.param(kind, marks=on_server) if kind == "postgres" else kind for kind in kinds]
    metafunc.parametrize("store_of_record", params, indirect=True)


@pytest.fixture
def hash_system(store_of_record: str) -> Iterator[CognitiveSystem]:
    """A system on disk (the store of record, Qdrant Edge) with the deterministic hash encoder."""
    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    yield system
    system.close()


@pytest.fixture
def real_system(store_of_record: str, real_encoder: SentenceBertEncoder) -> Iterator[CognitiveSystem]:
    """A system on disk (the store of record, Qdrant Edge) with the real all-MiniLM-L6-v2 encoder."""
    system = build_system(Settings(env_file=None), encoder=real_encoder)
    yield system
    system.close()


# Skip reasons that the summary repeats in capitals (tests/dashboard/conftest.py and
# tests/fixtures/postgres.py skip with them).
_LOUD_SKIPS = ("BROWSER TESTS DID NOT RUN", "POSTGRESQL TESTS DID NOT RUN")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say in capitals when the browser or PostgreSQL tests were skipped: they never pass silently. Read from
    the skip reports, which reach this process from xdist's workers too."""
    reasons: list[str] = []
    for report in terminalreporter.stats.get("skipped", []):
        if isinstance(report.longrepr, tuple):
            reason = str(report.longrepr[2]).removeprefix("Skipped: ")
            if reason.startswith(_LOUD_SKIPS) and reason not in reasons:
                reasons.append(reason)
    for reason in reasons:
        terminalreporter.write_sep("!", reason, red=True, bold=True)


# --- tiers ----------------------------------------------------------------------------------

_CHEAP_PROGRAMS = frozenset({"git", "sh"})  # milliseconds each: the fast tier may start them
# What tests/fixtures/postgres.py starts, once per test process, for a test marked postgres.
_SERVER_PROGRAMS = frozenset({"pg_config", "initdb", "runuser", "postgres"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Markers from facts: the fixtures a test uses and the protocol era it runs in. An MCP test
    run on both stores runs in the older protocol era on SQLite alone (the era is the transport's,
    the store the system's: one run of the pair each); its PostgreSQL run in that era is deselected."""
    twice = [item for item in items if _legacy_on_postgres(item)]
    if twice:
        config.hook.pytest_deselected(items=twice)
        items[:] = [item for item in items if not _legacy_on_postgres(item)]
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if "real_encoder" in fixtures:
            item.add_marker(pytest.mark.model)
        if fixtures & {"browser", "live_server"}:
            item.add_marker(pytest.mark.browser)
        if "live_server" in fixtures:
            item.add_marker(pytest.mark.subprocess)
        if "postgres_server" in fixtures:
            item.add_marker(pytest.mark.postgres)
        if _params(item).get("client") == "legacy":
            item.add_marker(pytest.mark.legacy_protocol)


def _params(item: pytest.Item) -> dict[str, Any]:
    callspec = getattr(item, "callspec", None)
    return dict(callspec.params) if callspec is not None else {}


def _legacy_on_postgres(item: pytest.Item) -> bool:
    params = _params(item)
    return params.get("client") == "legacy" and params.get("store_of_record") == "postgres"


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
        allowed = _CHEAP_PROGRAMS | (_SERVER_PROGRAMS if node.get_closest_marker("postgres") else frozenset())

        def watched_popen(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
            program = _program(args)
            if program not in allowed:
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
