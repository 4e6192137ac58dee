"""A store's named locks (``StoreOfRecord.exclusive``): one holder at a time across every process
that opens the store, and released by the system when the holder exits, also on ``kill -9``, so a
crashed holder never leaves a stale lock behind. The loaders hold the one named ``load``
(``loaders/lock.py``).

SQLite: an exclusive ``flock`` on a file beside the database (``<file>-<name>.lock``), which holds
the holder's process id for the message of one that waits. PostgreSQL: a session advisory lock
taken on a connection of its own, kept for the holding and closed after (the server releases the
lock when the session ends, also when the client dies); that connection's ``application_name``
names the holder (host and process id), read back from ``pg_stat_activity`` by one that waits.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["Waiting", "held_beside"]

# Called once, with how the holder is named, before waiting for it.
Waiting = Callable[[str], None]


@contextmanager
def held_beside(database: Path, name: str, waiting: Waiting) -> Iterator[None]:
    """Hold the lock ``name`` of the SQLite file ``database`` (waiting for its holder first)."""
    lock = database.with_name(f"{database.name}-{name}.lock")
    descriptor = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            waiting(f"process {_holder(descriptor)}")
            fcntl.flock(descriptor, fcntl.LOCK_EX)
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(descriptor)


def _holder(descriptor: int) -> str:
    """The process id the holder wrote into the lock file, or "unknown"."""
    try:
        return os.pread(descriptor, 32, 0).decode("ascii").strip() or "unknown"
    except (OSError, UnicodeDecodeError):
        return "unknown"
