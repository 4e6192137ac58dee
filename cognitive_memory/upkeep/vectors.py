"""The health of the vector index: opening it (a damaged embedded store set aside first, for
``--repair``), its layout and payload indexes, its rebuild from SQLite, and its count against
SQLite's.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from cognitive_memory.errors import CognitiveMemoryError, StorageError
from cognitive_memory.index.edge_errors import set_aside
from cognitive_memory.index.vector_store import INDEXED_FIELDS, SESSION_FIELD
from cognitive_memory.lifecycle.forgetting import purge_expired
from cognitive_memory.main import build_system
from cognitive_memory.replicas.index_replication import unindexed_threshold
from cognitive_memory.storage.database import raised_by_the_database
from cognitive_memory.storage.memories import SESSION_SCAN
from cognitive_memory.upkeep.health import REPAIR_HINT, CheckResult, Status, count_phrase

if TYPE_CHECKING:
    from cognitive_memory.settings import Settings
    from cognitive_memory.system import CognitiveSystem

__all__ = [
    "after_set_aside",
    "check_counts",
    "check_vectors",
    "check_words",
    "open_system",
    "open_system_for_repair",
    "repair_index",
    "totals",
]


def open_system(settings: Settings) -> CognitiveSystem | CheckResult:
    """Build the system with the real model, or the failed ``qdrant`` (or ``sqlite``) check."""
    try:
        return build_system(settings)
    except CognitiveMemoryError as exc:
        return _failed_open(exc, settings)


def _failed_open(exc: CognitiveMemoryError, settings: Settings) -> CheckResult:
    """The check that failed to open: the store of record's (``database`` on a server, as
    ``check_postgres`` names it, else ``sqlite``) or the index's."""
    if not raised_by_the_database(exc):
        return CheckResult("qdrant", "fail", exc.message)
    name = "sqlite" if settings.storage.database_url is None else "database"
    return CheckResult(name, "fail", exc.message)


def open_system_for_repair(settings: Settings) -> tuple[CognitiveSystem | CheckResult, Path | None]:
    """``open_system``, but an embedded store too damaged to open (``index_damaged``) is first set
    aside (renamed, kept) and a new one made, which ``--repair`` then fills from SQLite; returns
    where the damaged store went, if it was moved."""
    try:
        return build_system(settings), None
    except CognitiveMemoryError as exc:
        if exc.code != "index_damaged":
            return _failed_open(exc, settings), None
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
    detail = f"{where}: {layout}, {count_phrase(info.vector_count, 'vector')}"
    held = set(info.details.get("payload_indexes", INDEXED_FIELDS))
    missing = sorted(set(INDEXED_FIELDS) - held - {SESSION_FIELD})
    if missing:
        return CheckResult("qdrant", "warn", f"{detail}; no payload index on {', '.join(missing)}")
    state = info.details.get("status", "green")
    if state != "green":
        return CheckResult("qdrant", "warn", f"{detail}; collection status {state}")
    if not _has_sessions(system):
        return CheckResult("qdrant", "warn", f"{detail}; {SESSIONLESS}")
    unindexed = info.vector_count - int(info.details.get("indexed_vectors", info.vector_count))
    builder = info.details.get("index_build_pid")
    if builder is not None:
        return CheckResult("qdrant", "ok", f"{detail}; the HNSW index is being built in process {builder}")
    if unindexed >= unindexed_threshold(info.vector_count):
        return CheckResult(
            "qdrant",
            "warn",
            f"{detail}; {count_phrase(unindexed, 'vector')} searched exactly, without the HNSW index "
            "(recall slows as they grow): `memory_system doctor --repair` builds it",
        )
    return CheckResult("qdrant", "ok", detail)


SESSIONLESS = (
    "its points lack their session (the index was made before it was in the payload): a session "
    f"filter searches the session's latest {SESSION_SCAN:,} memories only until `memory_system doctor "
    "--repair` writes them (the process that owns an embedded store rebuilds it in the background)"
)


def _has_sessions(system: CognitiveSystem) -> bool:
    """Whether the index holds every point's session (True when it cannot say: the other checks
    report an index that does not answer)."""
    try:
        return system.vectors.has_sessions()
    except StorageError:
        return True


def repair_index(system: CognitiveSystem) -> CheckResult:
    """Rewrite the index from the vectors in SQLite (``--repair``)."""
    started = time.perf_counter()
    try:
        before = system.vectors.count()
        written = system.rebuild_index()
        after = system.vectors.count()
        purged = purge_expired(system, float(system.configuration.get("trash_days", 30)))
    except StorageError as exc:
        return CheckResult("repair", "fail", f"rebuilding the index failed: {exc.message}")
    seconds = time.perf_counter() - started
    written_text = count_phrase(written, "vector")
    detail = f"rebuilt the index from SQLite in {seconds:.1f} s: {written_text} written ({before} -> {after})"
    if purged:
        detail += f"; purged {count_phrase(purged, 'memory', 'memories')} past their days in the trash"
    return CheckResult("repair", "ok", detail)


def check_counts(system: CognitiveSystem) -> CheckResult:
    """SQLite and the index hold the same number of memories, and no vector write is queued."""
    try:
        system.flush()
        memories, vectors = totals(system)
        pending = len(system.records.outbox.pending())
    except StorageError as exc:
        return CheckResult("counts", "fail", exc.message)
    detail = (
        f"{count_phrase(memories, 'memory', 'memories')} in the database, "
        f"{count_phrase(vectors, 'vector')} in the index, {count_phrase(pending, 'write')} queued"
    )
    if memories != vectors or pending:
        return CheckResult("counts", "fail", f"{detail}: {REPAIR_HINT}")
    return CheckResult("counts", "ok", detail)


def check_words(system: CognitiveSystem) -> CheckResult:
    """The index holds every memory's words, or they are being built in the background (an
    older store's: ``replicas/index_words.py``)."""
    try:
        progress = system.words_upgrade.progress()
        reweighing = system.words_upgrade.reweigh_progress()
    except StorageError as exc:
        return CheckResult("words", "fail", exc.message)
    if progress is None and reweighing is not None:
        done, total = reweighing
        return CheckResult(
            "words",
            "ok",
            f"every memory's words are in the vector index; weighed again against the store's "
            f"average length in the background: {done:,} of {total:,}",
        )
    if progress is None:
        return CheckResult("words", "ok", "every memory's words are in the vector index")
    done, total = progress
    return CheckResult(
        "words",
        "ok",
        f"being built in the background: {done:,} of {total:,} {'memory' if total == 1 else 'memories'} "
        "(recall searches the words in SQLite until they are all in)",
    )


def totals(system: CognitiveSystem) -> tuple[int, int]:
    """(memories in SQLite, points in the index)."""
    return system.records.memories.counts().total, system.vectors.count()
