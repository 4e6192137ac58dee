"""Putting a checked snapshot (``backup.snapshot``) in place of a data directory's database.

The order keeps every moment recoverable. The old database is first made one self-contained file
(its WAL checkpointed; this fails while any process has it open, which is how a running server is
detected). The snapshot's copy is written beside it under a hidden name, with every memory queued
in its vector outbox, and flushed. The old embedded vector store is renamed aside, the copy renamed
over the database (the commit point), and the index rebuilt from SQLite (``copy_vectors``, as
``doctor --repair`` does). A process killed before the rename leaves the old database; after it,
the new one, whose outbox refills the index at the next start (or ``doctor --repair``).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cognitive_memory.backup.snapshot import Snapshot, file_sha256
from cognitive_memory.errors import InvalidInputError, StorageError, StoreLockedError
from cognitive_memory.index.edge_errors import lock_file
from cognitive_memory.index.vector_store import VectorStore
from cognitive_memory.regular_files import NotRegularFileError, open_regular
from cognitive_memory.replicas.index_replication import copy_vectors, unindexed_threshold
from cognitive_memory.storage.snapshots import claim_file, memory_count_in, queue_every_memory
from cognitive_memory.storage.sqlite_store import SQLiteMemoryStore

__all__ = ["RestoreReport", "claim_database", "memory_count", "restore_snapshot"]

Progress = Callable[[int, int], None]
IndexOpener = Callable[[], VectorStore]


@dataclass(frozen=True, slots=True)
class RestoreReport:
    """What a restore placed and rebuilt."""

    database: str
    memories: int
    vectors: int
    stale_removed: int
    seconds: float
    old_index_removed: bool


def memory_count(database: Path) -> int:
    """How many memories ``database`` holds (0 when it or its table does not exist yet)."""
    return memory_count_in(database)


def claim_database(
    database: Path, vector_path: Path | None, *, set_aside_damaged: bool = False
) -> Path | None:
    """Refuse with ``StoreLockedError`` when a process uses the database or the embedded vector
    store; else leave the database one self-contained file (no WAL beside it), so that replacing
    it cannot meet a stale log. A database SQLite cannot read is refused, or with
    ``set_aside_damaged`` renamed beside itself (with its WAL): that name is returned."""
    if vector_path is not None:
        _check_vector_lock(vector_path)
    if not database.is_file():
        return None
    busy = StoreLockedError(
        f"{database} is open in another process (a running server or command): stop every "
        "memory_system process using this data directory, then restore again."
    )
    claim = claim_file(database)
    if claim.state == "busy":
        raise busy
    if claim.state == "damaged":
        if set_aside_damaged:
            return _set_damaged_aside(database)
        raise StorageError(
            f"{database} cannot be read ({claim.detail}): restore with --force to set it aside (renamed "
            "beside itself, nothing deleted), or move it away yourself."
        )
    return None


def _set_damaged_aside(database: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    aside = database.with_name(f"{database.name}.damaged-{stamp}-{uuid.uuid4().hex[:6]}")
    try:
        for suffix in ("-wal", "-shm", ""):  # its log first: no new database meets a stale log
            part = Path(f"{database}{suffix}")
            if part.exists():
                part.rename(Path(f"{aside}{suffix}"))
    except OSError as exc:
        raise StorageError(f"Could not set the damaged {database} aside: {exc}") from exc
    return aside


def _check_vector_lock(vector_path: Path) -> None:
    lock = vector_path.parent / f".{vector_path.name}.lock"
    if not lock.exists():
        return
    with lock_file(vector_path) as guard:
        try:
            fcntl.flock(guard, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreLockedError(
                f"The vector store in {vector_path} is open in a running memory_system process: stop "
                "it, then restore again."
            ) from None
        fcntl.flock(guard, fcntl.LOCK_UN)


def restore_snapshot(
    snapshot: Snapshot,
    database: Path,
    vector_path: Path | None,
    open_index: IndexOpener,
    progress: Progress | None = None,
) -> RestoreReport:
    """Place ``snapshot`` (already checked) as ``database`` and rebuild the index ``open_index``
    opens. ``vector_path``, the embedded store's directory, is emptied first (None: a server)."""
    started = time.perf_counter()
    claim_database(database, vector_path)
    database.parent.mkdir(parents=True, exist_ok=True)
    staged = _stage(snapshot, database)
    try:
        aside = _set_aside(vector_path) if vector_path is not None else None
        for leftover in (Path(f"{database}-wal"), Path(f"{database}-shm")):
            leftover.unlink(missing_ok=True)
        os.replace(staged, database)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
    _fsync_dir(database.parent)
    memories, copied, stale = _rebuild(database, open_index, progress)
    if aside is not None:
        shutil.rmtree(aside, ignore_errors=True)
    seconds = time.perf_counter() - started
    return RestoreReport(str(database), memories, copied, stale, seconds, aside is not None)


def _stage(snapshot: Snapshot, database: Path) -> Path:
    """The snapshot's database copied beside ``database`` under a hidden name, every memory
    queued for the index, flushed to disk. The copy must still be the file ``verify_snapshot``
    checked (its manifest's sha256): a snapshot swapped in between is refused."""
    staged = database.parent / f".{database.name}.restore-{uuid.uuid4().hex[:8]}"
    try:
        with open_regular(snapshot.database) as source, staged.open("wb") as target:
            shutil.copyfileobj(source, target)
        if file_sha256(staged) != snapshot.manifest.sha256:
            raise InvalidInputError(
                f"{snapshot.database} changed after it was checked: restore it again once nothing writes it."
            )
        queue_every_memory(staged)
        with staged.open("rb+") as handle:
            os.fsync(handle.fileno())
    except InvalidInputError:
        staged.unlink(missing_ok=True)
        raise
    except NotRegularFileError as exc:
        staged.unlink(missing_ok=True)
        raise InvalidInputError(
            f"{snapshot.database} changed after it was checked (it is now {exc.what}): "
            "restore another snapshot."
        ) from None
    except (OSError, StorageError) as exc:
        staged.unlink(missing_ok=True)
        raise StorageError(f"Could not write the restored database beside {database}: {exc}") from exc
    return staged


def _set_aside(vector_path: Path) -> Path | None:
    """Rename the embedded store out of the way, holding its lock; None if there is none."""
    if not vector_path.exists():
        return None
    with lock_file(vector_path) as guard:
        try:
            fcntl.flock(guard, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreLockedError(f"The vector store in {vector_path} is open in another process.") from None
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        target = vector_path.with_name(f"{vector_path.name}.replaced-{stamp}-{uuid.uuid4().hex[:6]}")
        vector_path.rename(target)
        return target


def _rebuild(database: Path, open_index: IndexOpener, progress: Progress | None) -> tuple[int, int, int]:
    """Fill a fresh index from the restored database; (memories, vectors written, stale removed)."""
    records = SQLiteMemoryStore(database)
    try:
        index = open_index()
        try:
            pending = [memory_id for memory_id, _ in records.outbox.pending()]
            report = copy_vectors(records, index, progress)
            records.indexed_words.mark_complete()
            records.outbox.clear(pending)
            _build_index(index)
        finally:
            index.close()
        return records.memories.counts().total, report.copied, report.stale_removed
    finally:
        records.close()


def _build_index(index: VectorStore) -> None:
    try:
        index.build_index(unindexed_threshold(index.count()))
    except StorageError:  # exact search answers meanwhile; doctor --repair builds it later
        return


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
