"""What the embedded Qdrant Edge shard's failures mean to a user: the Rust core raises bare
exceptions, and these turn them into the store's errors, each saying what to do; and the setting
aside of a damaged shard."""

from __future__ import annotations

import fcntl
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from cognitive_memory.errors import IndexMismatchError, StorageError, StoreLockedError
from cognitive_memory.regular_files import NotRegularFileError, open_lock

__all__ = ["classify", "damaged", "lock_file", "locked", "set_aside"]


def lock_file(path: Path) -> BinaryIO:
    """The shard's lock file (``.<name>.lock`` beside it), open for ``flock``; something else in its
    place (a FIFO another user made, which would block the open) is refused saying what to do."""
    lock = path.parent / f".{path.name}.lock"
    try:
        return open_lock(lock)
    except NotRegularFileError as exc:
        raise StorageError(
            f"Cannot lock the vector store in {path}: {lock} is {exc.what}, not the lock file this "
            "program makes (another user may have put it there). Remove it and try again; the data "
            "directory should be yours alone (`chmod 700` it).",
            code="lock_file",
        ) from None


def locked(path: Path) -> StoreLockedError:
    """The shard is open in another process."""
    return StoreLockedError(
        f"The vector store in {path} is open in another memory_system process. Stop that "
        "process, or give this one its own COGNITIVE_MEMORY_DATA_DIR.",
    )


def damaged(path: Path, exc: Exception) -> StorageError:
    """The shard cannot be opened: set it aside and rebuild it from SQLite."""
    return StorageError(
        f"The embedded vector store in {path} is damaged and cannot be opened ({exc}). SQLite keeps "
        "every vector: run `memory_system doctor --repair` to set it aside and rebuild it (nothing is "
        "re-embedded).",
        code="index_damaged",
    )


def set_aside(path: Path) -> Path:
    """Rename a damaged shard to ``<name>.damaged-<UTC time>`` (kept, not deleted) while holding
    its lock, so no process opens it meanwhile; returns the new path."""
    with lock_file(path) as guard:
        try:
            fcntl.flock(guard, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise locked(path) from None
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        target = path.with_name(f"{path.name}.damaged-{stamp}")
        path.rename(target)
        return target


def classify(exc: Exception, path: Path) -> StorageError:
    """The store error an exception of the shard at ``path`` means."""
    text = str(exc)
    if "WouldBlock" in text:  # the WAL lock another process holds
        return locked(path)
    if "Incompatible config" in text:  # a shard made for vectors of another size or distance
        return IndexMismatchError(
            f"The embedded vector store in {path} was made for other vectors than the configured "
            f"model's ({text.rsplit(': ', 1)[-1]}): delete {path} and run `memory_system doctor "
            "--repair` to rebuild it from SQLite."
        )
    if "os error 28" in text or "No space left" in text:
        return StorageError(
            f"The disk holding the vector store in {path} is full ({text}): free some space. SQLite keeps "
            "every memory, and the index's writes it queued are replayed at the next start.",
            code="disk_full",
        )
    if "os error 30" in text or "Read-only file system" in text:
        return StorageError(
            f"The vector store in {path} is on a read-only file system ({text}): make it writable, or "
            "point COGNITIVE_MEMORY_DATA_DIR at a writable copy.",
            code="read_only",
        )
    return StorageError(f"The embedded vector store in {path} failed: {text}")
