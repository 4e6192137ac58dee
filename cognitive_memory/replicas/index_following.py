"""An index of this process's own kept in step with a store of record that other processes write:
several servers on one PostgreSQL database, each with its embedded index (docs/team.md).

A server's own writes reach its index at once (``IndexReplication``); another server's reach it
through the change log. Before each recall the follower reads the log from the last change its
index holds (one point read when nothing changed), and writes into the index the memories that
changed, or deletes those that are gone, reading their vectors and words from the store. It keeps
that last change, with the identity of the store it belongs to, in a small file beside the index
(``followed.json``, read only if it is a regular file and replaced whole, never written in place),
written after the index took the changes: a crash in between only makes the next start write
them again. An index with no such file, one made for another store, or one the
log no longer reaches back to (trimmed past it) is rewritten whole from the store
(``copy_vectors``), and the follower says so in the log.
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from pathlib import Path

from cognitive_memory.core.store import StoreOfRecord
from cognitive_memory.errors import StorageError
from cognitive_memory.index.vector_store import VectorStore
from cognitive_memory.regular_files import read_regular, write_replacing
from cognitive_memory.replicas.index_replication import (
    COPY_BATCH,
    copy_vectors,
    upsert_indexable,
    worded_points,
)

__all__ = ["MARKER_NAME", "STORE_IDENTITY", "IndexFollower"]

logger = logging.getLogger(__name__)

MARKER_NAME = "followed.json"
MARKER_BYTES = 4096  # what is read of it at most: a store's identity and a number
# The store_meta key of the store's identity: an index follows one store, never another.
STORE_IDENTITY = "store_id"
# The kinds of change that alter a memory's point: its row (vector, payload) and its words; not its
# uses (every recall writes them for the memories it returns).
_KINDS = frozenset({"memory", "words"})


class IndexFollower:
    """Keeps ``vectors`` in step with ``records`` by the change log (see the module)."""

    def __init__(self, records: StoreOfRecord, vectors: VectorStore, folder: Path) -> None:
        self._records = records
        self._vectors = vectors
        self._marker = folder / MARKER_NAME
        self._lock = threading.Lock()
        self._store: str | None = None
        self._seq: int | None = None  # the last change the index holds, once known

    def catch_up(self) -> int:
        """Bring the index up to the change log's head; returns how many memories it wrote or
        deleted (all of them when it was rewritten whole). Raises ``StorageError`` when the store
        or the index fails: the caller says ``degraded`` rather than answering from a stale index."""
        with self._lock:
            if self._seq is None:
                self._store = self._identity()
                self._seq = self._kept_seq(self._store)
            if self._seq is None:
                return self._rewrite("it has no record of the changes it holds")
            seq = self._seq
            applied = self._records.together(lambda: self._take(seq))
            if applied is None:
                return self._rewrite("the change log no longer reaches back to it")
            return applied

    def _take(self, seq: int) -> int | None:
        """Inside one read of the store (one transaction, one round trip to begin it on a
        server): the changes after ``seq`` written into the index, and how many; None when the
        log no longer reaches back to ``seq``."""
        found = self._records.changes.since(seq)
        if found.whole:
            return None
        changed = list(dict.fromkeys(c.memory_id for c in found.changes if c.kind in _KINDS))
        for start in range(0, len(changed), COPY_BATCH):
            self._apply(changed[start : start + COPY_BATCH])
        if found.head != seq:
            self._keep(found.head)
        return len(changed)

    def _apply(self, ids: list[str]) -> None:
        present = self._records.memories.get(ids)
        refused = upsert_indexable(self._vectors, worded_points(self._records, present))
        for memory_id, problem in refused.items():
            logger.warning("The index refused memory %s from the change log: %s", memory_id, problem)
        gone = sorted(set(ids) - {memory.id for memory in present})
        if gone:
            self._vectors.delete(gone)

    def _rewrite(self, why: str) -> int:
        """Rewrite the index whole from the store, from the log's head read before the copy (a
        change made during it is written again at the next catch-up)."""
        head = self._records.changes.head()
        logger.warning("The vector index is rewritten from the store of record: %s", why)
        report = copy_vectors(self._records, self._vectors)
        self._keep(head)
        return report.copied

    def _identity(self) -> str:
        """The store's identity, made by the first process that asks (a race keeps one of them)."""
        properties = self._records.properties
        found = properties.get(STORE_IDENTITY)
        if found is None:
            properties.set(STORE_IDENTITY, uuid.uuid4().hex)
            found = properties.get(STORE_IDENTITY)
        if found is None:
            raise StorageError("The store of record did not keep its identity.")
        return found

    def _kept_seq(self, store: str) -> int | None:
        """The last change the index holds, if its marker belongs to ``store``."""
        try:
            kept = json.loads(read_regular(self._marker, limit=MARKER_BYTES))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            logger.warning("The index's record of changes %s is unreadable (%s)", self._marker, exc)
            return None
        if not isinstance(kept, dict) or kept.get("store") != store or not isinstance(kept.get("seq"), int):
            return None
        return int(kept["seq"])

    def _keep(self, seq: int) -> None:
        """Record ``seq`` as held (write a temporary file, then rename it over the marker)."""
        try:
            self._marker.parent.mkdir(parents=True, exist_ok=True)
            write_replacing(self._marker, json.dumps({"store": self._store, "seq": seq}))
        except OSError as exc:
            raise StorageError(f"Cannot record the changes the index holds in {self._marker}: {exc}") from exc
        self._seq = seq
