"""The checks behind ``memory_system doctor``; each returns one ``CheckResult``.

An expected failure (a locked store, a model that does not load, a full disk) is a ``fail`` result
with a message that says what to do, never an exception. The core, numpy, torch and Qdrant are
imported inside the functions so that ``memory_system --help`` stays instant.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
import time
import uuid
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    from cognitive_memory.errors import CognitiveMemoryError
    from cognitive_memory.service import MemoryService
    from cognitive_memory.settings import Settings, StorageSettings
    from cognitive_memory.system import CognitiveSystem

__all__ = [
    "SCRATCH_TAG",
    "CheckResult",
    "SettingsSource",
    "Status",
    "after_set_aside",
    "check_config",
    "check_counts",
    "check_data_dir",
    "check_model",
    "check_round_trip",
    "check_rows",
    "check_sqlite",
    "check_vectors",
    "mask_secret",
    "open_system",
    "open_system_for_repair",
    "repair_index",
    "skipped",
]

Status = Literal["ok", "warn", "fail"]
SettingsSource = Callable[[], "Settings"]
REPAIR_HINT = "run `memory_system doctor --repair` to rebuild the index from SQLite"
SCRATCH_TAG = "doctor-scratch"
LOW_DISK_BYTES = 500 * 1024 * 1024
NORM_TOLERANCE = 1e-3


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One line of the doctor's report."""

    name: str
    status: Status
    detail: str


def _n(count: int, singular: str, plural: str | None = None) -> str:
    return f"{count} {singular if count == 1 else plural or singular + 's'}"


def skipped(name: str, because: str) -> CheckResult:
    """A check that could not run because the check it needs failed."""
    return CheckResult(name, "warn", f"skipped: needs {because}, which failed")


def mask_secret(secret: str) -> str:
    """``****`` and at most the last two characters, and those only of a long secret."""
    return "****" + secret[-2:] if len(secret) >= 12 else "(set)"


def _mask_url(url: str) -> str:
    """The URL with the password of its user part (``user:password@``) masked."""
    parts = urlsplit(url)
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at or ":" not in userinfo:
        return url
    return urlunsplit(parts._replace(netloc=f"{userinfo.split(':', 1)[0]}:****@{host}"))


def check_config(resolve: SettingsSource | None = None) -> tuple[Settings | None, CheckResult]:
    """Resolve the settings (``Settings()``: environment and ./.env, unless ``resolve`` is given)
    and summarise them with secrets masked."""
    from cognitive_memory.errors import CognitiveMemoryError
    from cognitive_memory.settings import Settings

    try:
        settings = resolve() if resolve is not None else Settings()
    except CognitiveMemoryError as exc:
        return None, CheckResult("config", "fail", exc.message)
    storage, encoder = settings.storage, settings.encoder
    env_file = Path(".env")
    parts = [
        f"data_dir={storage.data_dir.expanduser()}",
        f"database={storage.database_path}",
        f"QDRANT_URL={_mask_url(storage.qdrant_url) if storage.qdrant_url else '(unset)'}",
        f"QDRANT_COLLECTION={storage.qdrant_collection}",
        f"model={encoder.model} ({encoder.backend}, {encoder.device})",
        f".env={env_file.resolve() if env_file.is_file() else 'none'}",
        *(f"{name}={masked}" for name, masked in _secrets(settings)),
    ]
    detail = ", ".join(parts)
    if storage.qdrant_api_key is not None and not storage.qdrant_url:
        return settings, CheckResult(
            "config", "warn", f"{detail}; QDRANT_API_KEY is unused without QDRANT_URL"
        )
    return settings, CheckResult("config", "ok", detail)


def _secrets(settings: Settings) -> list[tuple[str, str]]:
    """(variable, masked value) of every secret that is set, in every settings section."""
    from pydantic import SecretStr

    found = []
    for section in vars(settings).values():
        for name, field in getattr(type(section), "model_fields", {}).items():
            value = getattr(section, name)
            if isinstance(value, SecretStr):
                found.append((str(field.validation_alias or name), mask_secret(value.get_secret_value())))
    return found


def check_data_dir(storage: StorageSettings) -> CheckResult:
    """The data directory (and the database's directory) exist or can be made, and take writes."""
    directory = storage.data_dir.expanduser()
    folders = {directory: "COGNITIVE_MEMORY_DATA_DIR"}
    folders.setdefault(storage.database_path.parent, "COGNITIVE_MEMORY_DB_PATH")
    for folder, variable in folders.items():
        problem = _unwritable(folder, variable)
        if problem:
            return CheckResult("data_dir", "fail", problem)
    free = shutil.disk_usage(directory).free
    detail = f"{directory} is writable, {free / 1e9:.1f} GB free"
    if free < LOW_DISK_BYTES:
        return CheckResult("data_dir", "warn", f"{detail}: writes will fail when the disk is full")
    return CheckResult("data_dir", "ok", detail)


def _unwritable(folder: Path, variable: str) -> str | None:
    if folder.exists() and not folder.is_dir():
        return f"{folder} is a file, not a directory: point {variable} at a directory"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".doctor-") as probe:
            probe.write(b"doctor")
            probe.flush()
    except OSError as exc:
        return f"cannot create or write to {folder} ({exc.strerror or exc}): check {variable} and permissions"
    return None


def check_sqlite(path: Path) -> CheckResult:
    """Read-only: integrity_check, WAL mode and every migration recorded."""
    from cognitive_memory.storage.migrations import MIGRATIONS

    if not path.exists():
        return CheckResult("sqlite", "ok", f"no database yet at {path}: it is created on first use")
    try:
        integrity, journal, recorded = _inspect_sqlite(path)
    except sqlite3.OperationalError as exc:
        return CheckResult("sqlite", "fail", f"cannot read {path}: {exc}")
    except sqlite3.DatabaseError as exc:
        return CheckResult("sqlite", "fail", f"{path} is damaged ({exc}): {_salvage_hint(path)}")
    if integrity != ["ok"]:
        return CheckResult(
            "sqlite", "fail", f"{path} is damaged ({'; '.join(integrity[:3])}): {_salvage_hint(path)}"
        )
    known = [name for name, _ in MIGRATIONS]
    missing = [name for name in known if name not in recorded]
    unknown = sorted(recorded - set(known))
    detail = f"integrity ok, {journal.upper()}, {_n(len(recorded), 'migration')}"
    if unknown:
        return CheckResult("sqlite", "warn", f"{detail}; written by a newer version ({', '.join(unknown)})")
    if missing:
        return CheckResult("sqlite", "warn", f"{detail}; {', '.join(missing)} applied when the store opens")
    if journal != "wal":
        return CheckResult("sqlite", "warn", f"{detail}; switched to WAL when the store opens")
    return CheckResult("sqlite", "ok", detail)


def _salvage_hint(path: Path) -> str:
    return f"restore a backup, or salvage its rows with `sqlite3 {path} .recover`"


def _inspect_sqlite(path: Path) -> tuple[list[str], str, set[str]]:
    with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as conn:
        integrity = [str(row[0]) for row in conn.execute("PRAGMA integrity_check")]
        journal = str(conn.execute("PRAGMA journal_mode").fetchone()[0])
        table = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
        if conn.execute(table).fetchone() is None:
            return integrity, journal, set()
        return integrity, journal, {str(row[0]) for row in conn.execute("SELECT name FROM schema_migrations")}


def open_system(settings: Settings) -> CognitiveSystem | CheckResult:
    """Build the system with the real model, or the failed ``qdrant`` (or ``sqlite``) check."""
    from cognitive_memory.errors import CognitiveMemoryError
    from cognitive_memory.main import build_system

    try:
        return build_system(settings)
    except CognitiveMemoryError as exc:
        return _failed_open(exc)


def _failed_open(exc: CognitiveMemoryError) -> CheckResult:
    name = "sqlite" if isinstance(exc.__cause__, sqlite3.Error) else "qdrant"
    return CheckResult(name, "fail", exc.message)


def open_system_for_repair(settings: Settings) -> tuple[CognitiveSystem | CheckResult, Path | None]:
    """``open_system``, but an embedded store too damaged to open (``index_damaged``) is first set
    aside (renamed, kept) and a new one made, which ``--repair`` then fills from SQLite; returns
    where the damaged store went, if it was moved."""
    from cognitive_memory.errors import CognitiveMemoryError
    from cognitive_memory.index.edge_store import set_aside
    from cognitive_memory.main import build_system

    try:
        return build_system(settings), None
    except CognitiveMemoryError as exc:
        if exc.code != "index_damaged":
            return _failed_open(exc), None
        damaged = exc
    path = settings.storage.vector_path
    try:
        moved = set_aside(path)
    except (CognitiveMemoryError, OSError) as exc:
        reason = exc.message if isinstance(exc, CognitiveMemoryError) else exc.strerror or str(exc)
        return CheckResult("qdrant", "fail", f"{damaged.message} Setting it aside failed: {reason}"), None
    return open_system(settings), moved


def after_set_aside(vectors: CheckResult, moved: Path) -> CheckResult:
    """The ``qdrant`` line when ``--repair`` replaced a damaged store: a warning that says where the
    damaged one went (the repair line then fills the new one)."""
    status: Status = "fail" if vectors.status == "fail" else "warn"
    detail = f"the damaged store was set aside as {moved} (delete it once recall works); the new one: "
    return CheckResult("qdrant", status, detail + vectors.detail)


def check_vectors(system: CognitiveSystem) -> CheckResult:
    """The index answers, with the expected dimension, distance and payload indexes."""
    from cognitive_memory.errors import StorageError
    from cognitive_memory.index.vector_store import INDEXED_FIELDS
    from cognitive_memory.replication import unindexed_threshold

    try:
        info = system.vectors.info()
    except StorageError as exc:
        return CheckResult("qdrant", "fail", exc.message)
    dimension = system.encoder.dimension
    where = f"{info.backend} ({info.mode}) at {info.location}"
    if info.backend == "qdrant-edge":  # a shard of another layout fails to open (IndexMismatchError)
        layout = f"{dimension}-d cosine"
    else:
        layout = f"collection {info.details.get('collection')}, {dimension}-d"
    detail = f"{where}: {layout}, {_n(info.vector_count, 'vector')}"
    missing = sorted(set(INDEXED_FIELDS) - set(info.details.get("payload_indexes", INDEXED_FIELDS)))
    if missing:
        return CheckResult("qdrant", "warn", f"{detail}; no payload index on {', '.join(missing)}")
    state = info.details.get("status", "green")
    if state != "green":
        return CheckResult("qdrant", "warn", f"{detail}; collection status {state}")
    unindexed = info.vector_count - int(info.details.get("indexed_vectors", info.vector_count))
    builder = info.details.get("index_build_pid")
    if builder is not None:
        return CheckResult("qdrant", "ok", f"{detail}; the HNSW index is being built in process {builder}")
    if unindexed >= unindexed_threshold(info.vector_count):
        return CheckResult(
            "qdrant",
            "warn",
            f"{detail}; {_n(unindexed, 'vector')} searched exactly, without the HNSW index "
            "(recall slows as they grow): `memory_system doctor --repair` builds it",
        )
    return CheckResult("qdrant", "ok", detail)


def check_model(system: CognitiveSystem) -> CheckResult:
    """The model loads from local files and gives one normalized vector of the expected size."""
    import numpy as np

    from cognitive_memory.errors import EncoderError
    from cognitive_memory.main import EMBEDDING_DIMENSION

    encoder = system.encoder
    started = time.perf_counter()
    problem = _damaged_export(encoder)
    if problem:
        return CheckResult("model", "fail", problem)
    try:
        encoder.warm_up()
        seconds = time.perf_counter() - started
        vectors = encoder.encode(["memory_system doctor checks that the embedding model works."])
    except EncoderError as exc:
        return CheckResult("model", "fail", exc.message)
    if vectors.shape != (1, EMBEDDING_DIMENSION):
        expected = (1, EMBEDDING_DIMENSION)
        return CheckResult("model", "fail", f"{encoder.name} gave shape {vectors.shape}, not {expected}")
    norm = float(np.linalg.norm(vectors[0]))
    if abs(norm - 1.0) > NORM_TOLERANCE:
        return CheckResult("model", "fail", f"{encoder.name} gave a vector of norm {norm:.4f}, not 1")
    backend = getattr(encoder, "backend", "torch")
    detail = (
        f"{encoder.name} ({backend}) loaded offline in {seconds:.1f} s, {EMBEDDING_DIMENSION}-d, "
        f"norm {norm:.4f}"
    )
    return CheckResult("model", "ok", detail)


def _damaged_export(encoder: object) -> str | None:
    """What is wrong with the ONNX export, checked against the sha256 and vectors saved when it was
    made (an export from before they were saved is exported again by the warm-up that follows)."""
    from cognitive_memory.encoding import OnnxEncoder
    from cognitive_memory.errors import EncoderError

    if not isinstance(encoder, OnnxEncoder):
        return None
    try:
        state, detail = encoder.check_export()
    except EncoderError as exc:
        return exc.message
    if state != "damaged":
        return None
    return (
        f"{detail}: run `memory_system encoder export` to export it again from the installed weights "
        "(until then a server ignores it and embeds with torch)"
    )


def check_rows(system: CognitiveSystem, repair: bool = False) -> CheckResult:
    """Every memory's row can be read and indexed; ``repair`` sets aside those that cannot (moved,
    whole, to the ``set_aside`` table: never deleted), before the index is rebuilt."""
    from cognitive_memory.errors import StorageError

    try:
        found = system.memories.damaged_rows(system.encoder.dimension)
        if found and repair:
            system.memories.set_aside(found)
        kept = system.memories.set_aside_count()
    except StorageError as exc:
        return CheckResult("rows", "fail", exc.message)
    where = f"the set_aside table of {system.memories.path}"
    if not found:
        earlier = f"; {_n(kept, 'memory', 'memories')} set aside earlier, kept in {where}" if kept else ""
        return CheckResult("rows", "ok", f"every memory can be read and indexed{earlier}")
    named = "; ".join(f"{row.id!r}: {row.problem}" for row in found[:5])
    more = f"; and {len(found) - 5} more" if len(found) > 5 else ""
    count = _n(len(found), "memory", "memories")
    if repair:
        detail = f"set aside {count} that could not be read or indexed ({named}{more}): kept in {where}"
        return CheckResult("rows", "warn", f"{detail} (docs/cli.md: Doctor)")
    detail = f"{count} cannot be read or indexed ({named}{more})"
    return CheckResult(
        "rows", "fail", f"{detail}: `memory_system doctor --repair` sets them aside (kept in {where})"
    )


def repair_index(system: CognitiveSystem) -> CheckResult:
    """Rewrite the index from the vectors in SQLite (``--repair``)."""
    from cognitive_memory.errors import StorageError
    from cognitive_memory.forgetting import purge_expired
    from cognitive_memory.service import MemoryService

    started = time.perf_counter()
    try:
        before = system.vectors.count()
        written = MemoryService(system).rebuild_index()
        after = system.vectors.count()
        purged = purge_expired(system, float(system.configuration.get("trash_days", 30)))
    except StorageError as exc:
        return CheckResult("repair", "fail", f"rebuilding the index failed: {exc.message}")
    seconds = time.perf_counter() - started
    written_text = _n(written, "vector")
    detail = f"rebuilt the index from SQLite in {seconds:.1f} s: {written_text} written ({before} -> {after})"
    if purged:
        detail += f"; purged {_n(purged, 'memory', 'memories')} past their days in the trash"
    return CheckResult("repair", "ok", detail)


def check_counts(system: CognitiveSystem) -> CheckResult:
    """SQLite and the index hold the same number of memories, and no vector write is queued."""
    from cognitive_memory.errors import StorageError

    try:
        system.flush()
        memories = system.memories.counts().total
        vectors = system.vectors.count()
        pending = len(system.memories.pending_vector_writes())
    except StorageError as exc:
        return CheckResult("counts", "fail", exc.message)
    detail = (
        f"{_n(memories, 'memory', 'memories')} in SQLite, {_n(vectors, 'vector')} in the index, "
        f"{_n(pending, 'write')} queued"
    )
    if memories != vectors or pending:
        return CheckResult("counts", "fail", f"{detail}: {REPAIR_HINT}")
    return CheckResult("counts", "ok", detail)


def check_round_trip(system: CognitiveSystem) -> CheckResult:
    """Store a scratch memory, recall it as the best match, delete it; nothing is left behind."""
    from cognitive_memory.errors import CognitiveMemoryError
    from cognitive_memory.service import MemoryService

    cli = MemoryService(system, session_id=f"doctor-{uuid.uuid4()}")
    started = time.perf_counter()
    try:
        before = (system.memories.counts().total, system.vectors.count())
        problem = _store_recall_delete(cli)
        system.flush()
        after = (system.memories.counts().total, system.vectors.count())
    except CognitiveMemoryError as exc:
        return CheckResult("round_trip", "fail", exc.message)
    if problem is None and after != before:
        problem = f"memories and vectors went from {before} to {after}"
    if problem:
        return CheckResult("round_trip", "fail", problem)
    millis = (time.perf_counter() - started) * 1000
    return CheckResult("round_trip", "ok", f"stored, recalled as core #1 and deleted in {millis:.0f} ms")


def _store_recall_delete(cli: MemoryService) -> str | None:
    """What went wrong in the round trip, if anything; the scratch memory is always deleted."""
    from cognitive_memory.service import StoreContext

    text = (
        f"memory_system doctor scratch memory {uuid.uuid4().hex}: stored, recalled and deleted "
        "to check that the memory works end to end."
    )
    context = StoreContext(tags=[SCRATCH_TAG], source_info="memory_system doctor", importance_score=0.0)
    stored = cli.store_experience(text, context)
    try:
        if stored.queued:
            return "the index did not accept the scratch memory's vector (it was queued)"
        recalled = cli.retrieve_memories(text, ["core"], max_results=1, include_bridges=False)
        core = recalled.memories.core
        if not core or core[0].id != stored.memory_id:
            return "recall did not return the scratch memory as core #1"
    finally:
        deleted = cli.delete_memories([stored.memory_id]).deleted
    if deleted != [stored.memory_id] or cli.system.memories.get([stored.memory_id]):
        return "the scratch memory could not be deleted"
    return None
