"""Keeping the vector index in step with SQLite, the source of truth.

Every vector write is first queued in SQLite's outbox (in the transaction that commits the
memory), then applied to the index and cleared. A write the index refuses stays queued and is
replayed: at start-up, when a process takes over a shared store, and every ``retry_seconds``
while the index fails. ``copy_vectors`` is the one path that rewrites an index from SQLite's
vectors: rebuilding it (``doctor --repair``, ``qdrant start``) and moving it (``qdrant migrate``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Protocol

from cognitive_memory.core.memory import CognitiveMemory
from cognitive_memory.core.store import IndexedWordRecords
from cognitive_memory.errors import RejectedPointsError, StorageError
from cognitive_memory.index.vector_store import VectorPoint, VectorStore
from cognitive_memory.replicas.index_points import DocumentReads, points_of, words_of
from cognitive_memory.storage.memories import MemoryCounts

__all__ = [
    "COPY_BATCH",
    "CopyReport",
    "IndexReplication",
    "OutboxRows",
    "RecordedVectors",
    "StoredMemories",
    "copy_vectors",
    "unindexed_threshold",
    "upsert_indexable",
]

logger = logging.getLogger(__name__)

# Memories read from SQLite and written to the index per batch when an index is copied or replayed.
COPY_BATCH = 500
# Bulk paths build the approximate index once this many vectors, and this share of all vectors,
# are searched exactly. Building merges into one segment, so its cost grows with the whole store
# (11-45 s at 100k here): the share keeps the rebuilds geometric instead of one per bulk load.
INDEX_MIN_UNINDEXED = 5_000
# Stores up to this many memories have their words weighted again in the store call that finds the
# average length drifted (under half a second here); larger ones in the background
# (``IndexReplication._weigh_again_if_drifted``).
REWEIGH_INLINE = 2_000
INDEX_UNINDEXED_SHARE = 0.2


class StoredMemories(Protocol):
    """The memories whose vectors the index is copied from."""

    def get(self, ids: Sequence[str]) -> list[CognitiveMemory]: ...

    def batches(self, batch_size: int = ...) -> Iterator[list[CognitiveMemory]]: ...

    def counts(self) -> MemoryCounts: ...


class OutboxRows(Protocol):
    """The vector writes the store of record queued and the index has not confirmed."""

    def pending(self) -> list[tuple[str, str]]: ...

    def clear(self, ids: Iterable[str], queued_before: float | None = None) -> None: ...


class RecordedVectors(Protocol):
    """The store of record as replication reads it (``storage.SQLiteMemoryStore``)."""

    @property
    def memories(self) -> StoredMemories: ...

    @property
    def outbox(self) -> OutboxRows: ...

    @property
    def word_documents(self) -> DocumentReads: ...

    @property
    def indexed_words(self) -> IndexedWordRecords: ...


@dataclass(frozen=True, slots=True)
class CopyReport:
    """What a copy wrote and what the target holds afterwards; ``rejected``: the memories the
    target could not take (id to what is wrong), left out of it."""

    copied: int
    stale_removed: int
    target_count: int
    without_vector: int
    rejected: Mapping[str, str] = field(default_factory=dict)

    @property
    def verified(self) -> bool:
        return self.target_count == self.copied


# The background build (cognitive_memory.replicas.index_build) stalls nobody, so it starts earlier,
# while exact search is still cheap (docs/performance.md: "Measurements behind the code").
BACKGROUND_MIN_UNINDEXED = 2_000


def unindexed_threshold(vector_count: int) -> int:
    """How many vectors must lack the approximate index before a bulk path builds it."""
    return max(INDEX_MIN_UNINDEXED, int(INDEX_UNINDEXED_SHARE * vector_count))


def background_threshold(vector_count: int) -> int:
    """How many vectors stored one by one must lack the index before a background build starts."""
    return max(BACKGROUND_MIN_UNINDEXED, int(INDEX_UNINDEXED_SHARE * vector_count))


def worded_points(records: RecordedVectors, memories: Sequence[CognitiveMemory]) -> list[VectorPoint]:
    """The memories' index points with their words, weighted from SQLite (``word_vectors``)."""
    documents = records.word_documents
    return points_of(memories, documents.of([m.id for m in memories]), documents.weighting_average())


def upsert_indexable(target: VectorStore, points: Sequence[VectorPoint]) -> dict[str, str]:
    """Upsert the points ``target`` can take; returns the others' ids with what is wrong (see
    ``vector_store.point_problem``). One bad point never keeps the rest of a batch out; a failure
    of the index itself raises ``StorageError``."""
    try:
        target.upsert(points)
    except RejectedPointsError as exc:
        target.upsert([point for point in points if point.id not in exc.rejected])
        return exc.rejected
    return {}


def copy_vectors(
    records: RecordedVectors,
    target: VectorStore,
    progress: Callable[[int, int], None] | None = None,
    batch_size: int = COPY_BATCH,
    *,
    served: bool = True,
) -> CopyReport:
    """Upsert every vector SQLite keeps into ``target`` in batches (``progress(done, total)``
    after each), delete the target's points SQLite does not know, and count the target.
    Nothing is re-embedded; reading SQLite is safe while a server writes (WAL readers). A memory
    the target cannot take is left out and reported (``CopyReport.rejected``).
    ``served``: ``target`` is the index recall uses from now on, so the words are weighed against
    the store's current average, kept from now on, and a pass weighing them again is dropped.
    Every point written holds its session: the copy ends by marking the target so
    (``VectorStore.mark_sessions``), which an index made before the session was in the payload
    lacks until then. A
    copy swapped in later (the background index build, ``served=False``) keeps the kept average
    and leaves a pass to the served index, whose writes reach the copy when it is swapped in: if
    the swap fails, the served index still matches what SQLite says."""
    total = records.memories.counts().total
    known: set[str] = set()
    rejected: dict[str, str] = {}
    done = without_vector = 0
    if served:
        records.word_documents.reweigh()
        records.indexed_words.drop_reweigh()  # every memory is weighed against that average here
    for batch in records.memories.batches(batch_size):
        points = worded_points(records, batch)
        refused = upsert_indexable(target, points)
        rejected.update(refused)
        known.update(point.id for point in points if point.id not in refused)
        without_vector += len(batch) - len(points)
        done += len(batch)
        if progress is not None:
            progress(done, total)
    stale = [point_id for point_id in target.ids() if point_id not in known]
    for start in range(0, len(stale), batch_size):
        target.delete(stale[start : start + batch_size])
    target.mark_sessions()  # every point was written with its session just now
    return CopyReport(len(known), len(stale), target.count(), without_vector, rejected)


class IndexReplication:
    """Applies SQLite's queued vector writes to the index, and retries them while it fails.

    ``bookkeeping`` runs the clearing of confirmed outbox rows off the caller's path: a row left
    behind by a crash is replayed harmlessly.
    """

    def __init__(
        self,
        records: RecordedVectors,
        vectors: VectorStore,
        bookkeeping: Executor,
        *,
        retry_seconds: float = 30.0,
    ) -> None:
        self._records = records
        self._memories = records.memories
        self._outbox = records.outbox
        self._vectors = vectors
        self._bookkeeping = bookkeeping
        self.retry_seconds = retry_seconds
        self._drain_lock = threading.Lock()
        self._drain_timer: threading.Timer | None = None
        self._closed = False
        self._told: set[str] = set()  # memories the index refused, logged once per process
        self._failing = False  # the index failed since its last write: said once, not per write

    def index(self, memories: Sequence[CognitiveMemory]) -> bool:
        """Upsert the memories' vectors (their writes already queued), and those of their
        neighbours in time, whose words they change; False when one of the memories was not
        indexed: the index failed (a retry is scheduled) or refused it (see ``_upsert``)."""
        self._weigh_again_if_drifted()
        given = {m.id for m in memories}
        documents = self._records.word_documents
        texts, average = documents.of(list(given)), documents.weighting_average()
        neighbours = {n for document in texts.values() for n in document.neighbour_ids} - given
        refused = self._upsert(memories, points_of(memories, texts, average))
        if refused is not None and neighbours:
            self._reword(sorted(neighbours), average)
        return refused is not None and not refused.keys() & given

    def _reword(self, ids: list[str], average: float | None = None) -> None:
        """Write again only the words of memories whose neighbours changed (their writes queued
        by SQLite), weighted from their texts alone; one the index lacks is upserted whole."""
        started = time.time()
        documents = self._records.word_documents
        average = documents.weighting_average() if average is None else average
        texts = documents.of(ids)
        try:
            missing = self._vectors.update_words({i: words_of(texts.get(i), average) for i in ids})
        except StorageError as exc:
            self._queued("write", exc)
            return
        self._bookkeeping.submit(self._outbox.clear, [i for i in ids if i not in missing], started)
        if missing:
            self._upsert(self._memories.get(missing))

    def _weigh_again_if_drifted(self) -> None:
        """Write every memory's words again, against the store's average length now, once that
        average has drifted from the one they were weighted with (``index/sparse.drifted``).
        It drifts fast while a store is small (cheap to rewrite, here) and slowly once it is
        large: above ``REWEIGH_INLINE`` memories the new average is taken at once and the words
        are weighed again in the background (``replicas/index_words.py``), so no store call waits."""
        documents = self._records.word_documents
        if not documents.drifted():
            return
        if self._memories.counts().total > REWEIGH_INLINE:
            documents.reweigh(in_background=True)
            return
        documents.reweigh()
        for batch in self._memories.batches(COPY_BATCH):
            if self._upsert(batch) is None:
                return

    def _upsert(
        self, memories: Sequence[CognitiveMemory], points: Sequence[VectorPoint] | None = None
    ) -> dict[str, str] | None:
        """Upsert the vectors (``points``, when the caller weighted them) and clear their queued
        writes; returns those the index refused (they stay queued, are logged once, and ``doctor``
        names them), or None if the index failed."""
        started = time.time()
        try:
            written = worded_points(self._records, memories) if points is None else points
            refused = upsert_indexable(self._vectors, written)
        except StorageError as exc:
            self._queued("write", exc)
            return None
        self._failing = False
        self._tell(refused)
        confirmed = [m.id for m in memories if m.id not in refused]
        self._bookkeeping.submit(self._outbox.clear, confirmed, started)
        return refused

    def _queued(self, what: str, exc: StorageError) -> None:
        """Say (once while the index keeps failing) that a write waits in the outbox; retry it later."""
        log = logger.debug if self._failing else logger.warning
        self._failing = True
        log("Vector index %s queued for replay: %s", what, exc)
        self._schedule_drain()

    def _tell(self, refused: Mapping[str, str]) -> None:
        for memory_id, problem in refused.items():
            if memory_id not in self._told:
                self._told.add(memory_id)
                logger.warning(
                    "Memory %r cannot be indexed: %s. Its write stays queued; `memory_system doctor` "
                    "names it and `memory_system doctor --repair` sets it aside.",
                    memory_id,
                    problem,
                )

    def unindex(self, ids: list[str]) -> bool:
        """Delete vectors whose deletion SQLite has queued; False (retry scheduled) if the index fails."""
        started = time.time()
        try:
            self._vectors.delete(ids)
        except StorageError as exc:
            self._queued("deletion", exc)
            return False
        self._bookkeeping.submit(self._outbox.clear, ids, started)
        self._reweigh_neighbours(set(ids))
        return True

    def _reweigh_neighbours(self, deleted: set[str]) -> None:
        """Write again the memories whose words a deletion changed (their neighbours in time,
        queued by SQLite in the same transaction), a batch at most; the rest waits for a replay."""
        queued = [memory_id for memory_id, op in self._outbox.pending() if op == "upsert"]
        rewrite = [memory_id for memory_id in queued if memory_id not in deleted][:COPY_BATCH]
        if rewrite:
            self._reword(rewrite)

    def replay_outbox(self) -> int:
        """Apply vector writes that SQLite committed but the index never confirmed, in batches;
        returns how many were pending. While the index fails, a retry is scheduled."""
        pending = self._outbox.pending()
        deletions = [memory_id for memory_id, op in pending if op == "delete"]
        if deletions and not self.unindex(deletions):
            return len(pending)
        upserts = [memory_id for memory_id, op in pending if op == "upsert"]
        for start in range(0, len(upserts), COPY_BATCH):
            if self._upsert(self._memories.get(upserts[start : start + COPY_BATCH])) is None:
                return len(pending)
        if upserts:
            logger.info("Replayed %d queued vector writes", len(upserts))
        return len(pending)

    def rebuild(self) -> int:
        """Rewrite the index from SQLite's vectors (see ``copy_vectors``), clear the outbox and
        build the approximate index; returns the number of vectors written. The writes of memories
        the index refused stay queued (see ``_upsert``)."""
        pending = [memory_id for memory_id, _ in self._outbox.pending()]
        report = copy_vectors(self._records, self._vectors)
        self._records.indexed_words.mark_complete()
        self._tell(report.rejected)
        self._outbox.clear([memory_id for memory_id in pending if memory_id not in report.rejected])
        self.build_index()
        logger.info(
            "Rebuilt the vector index: %d vectors written, %d stale points removed",
            report.copied,
            report.stale_removed,
        )
        return report.copied

    def build_index(self) -> bool:
        """After a bulk write: build the approximate index if enough vectors lack it (see
        ``INDEX_MIN_UNINDEXED``); True if it ran. A failure is logged, never raised: the index
        still answers by exact search."""
        try:
            threshold = unindexed_threshold(self._vectors.count())
            started = time.perf_counter()
            built = self._vectors.build_index(threshold)
        except StorageError as exc:
            logger.warning("Could not build the vector index (exact search goes on): %s", exc)
            return False
        if built:
            logger.info("Built the vector index in %.1f s", time.perf_counter() - started)
        return built

    def _schedule_drain(self) -> None:
        """Retry the outbox later, once at a time, until the index takes it."""
        with self._drain_lock:
            if self._drain_timer is not None or self._closed:
                return
            self._drain_timer = threading.Timer(self.retry_seconds, self._drain)
            self._drain_timer.daemon = True
            self._drain_timer.start()

    def _drain(self) -> None:
        with self._drain_lock:
            self._drain_timer = None
        self.replay_outbox()

    def close(self) -> None:
        """Stop retrying (what is still queued is replayed by the next process)."""
        with self._drain_lock:
            self._closed = True
            if self._drain_timer is not None:
                self._drain_timer.cancel()
