"""One loader at a time per store: the lock held from a load's plan to its last write.

A load reads what the store holds of its sources, embeds what changed and writes it. Two loads
planning at once from the same stored state would each add the same chunks, and the second's
chunk table would orphan the first's memories. So every loader (``load``, ``watch``'s batches,
``remove-file``, ``git-load``) holds the store's lock named ``load``
(``StoreOfRecord.exclusive``: a ``flock`` beside a SQLite file, an advisory lock of a PostgreSQL
database, so every machine whose servers share it) for the whole of that. A second loader waits
for it, says so once on stderr (naming the holder), and then plans against what the first wrote:
a second load of the same tree finds every file unchanged. The lock goes with its holder's
process, also on ``kill -9``, so a crashed load never leaves a stale lock behind.

One lock per store rather than per source: sources overlap (a tree and a file inside it, a
file moved between projects under one key), and concurrent loads compete for the same encoder.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from cognitive_memory.loaders.store import SourceStore

__all__ = ["LOCK_NAME", "holding_load_lock"]

LOCK_NAME = "load"
log = logging.getLogger(__name__)


@contextmanager
def holding_load_lock(store: SourceStore) -> Iterator[None]:
    """Hold the store's loader lock (waiting for another loader to finish first)."""
    records = store.records

    def waiting(holder: str) -> None:
        log.warning(
            "Waiting for another load into %s to finish (%s); Ctrl-C to give up.", records.where, holder
        )

    with records.exclusive(LOCK_NAME, waiting):
        yield
