"""One loader at a time per database: the lock held from a load's plan to its last write.

A load reads what the store holds of its sources, embeds what changed and writes it. Two loads
planning at once from the same stored state would each add the same chunks, and the second's
chunk table would orphan the first's memories. So every loader (``load``, ``watch``'s batches,
``remove-file``, ``git-load``) holds an exclusive ``flock`` on a file beside the database for the
whole of that. A second loader waits for it, says so once on stderr (with the holder's process
id), and then plans against what the first wrote: a second load of the same tree finds every file
unchanged. The kernel releases the lock when its holder exits, also on ``kill -9``, so a crashed
load never leaves a stale lock behind.

One lock per database rather than per source: sources overlap (a tree and a file inside it, a
file moved between projects under one key), and concurrent loads compete for the same encoder.
"""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

from cognitive_memory.loaders.store import SourceStore

__all__ = ["LOCK_SUFFIX", "holding_load_lock"]

LOCK_SUFFIX = "-load.lock"
log = logging.getLogger(__name__)


@contextmanager
def holding_load_lock(store: SourceStore) -> Iterator[None]:
    """Hold the database's loader lock (waiting for another loader to finish first)."""
    database = store.records.path
    lock = database.with_name(database.name + LOCK_SUFFIX)
    descriptor = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.warning(
                "Waiting for another load into %s to finish (process %s); Ctrl-C to give up.",
                database,
                _holder(descriptor),
            )
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
