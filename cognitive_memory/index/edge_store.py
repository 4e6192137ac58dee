"""The embedded default: Qdrant Edge, the Qdrant engine running in this process."""

from __future__ import annotations

import contextlib
import fcntl
import shutil
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import qdrant_edge as qe

from cognitive_memory.core.memory import Vector
from cognitive_memory.errors import StorageError
from cognitive_memory.index.edge_errors import classify, damaged, lock_file, locked
from cognitive_memory.index.edge_layout import (
    edge_filter,
    edge_words,
    has_words_vector,
    heap_loaded,
    nearest_request,
    payload_index,
    shard_config,
    stored_datatype,
    vectors_of,
)
from cognitive_memory.index.edge_unindexed import UnindexedPoints
from cognitive_memory.index.sparse import WORDS, SparseVector
from cognitive_memory.index.vector_store import (
    INDEXED_FIELDS,
    SESSION_FIELD,
    VectorFilter,
    VectorHit,
    VectorPoint,
    VectorStoreInfo,
    check_points,
    is_point_id,
)

__all__ = [
    "MIN_FREE_BYTES",
    "MIN_WRITE_FREE_BYTES",
    "EdgeVectorStore",
    "IndexWatcher",
    "free_bytes",
    "keep_shards_until_exit",
]

_WORDED = qe.Filter(must=[qe.HasVectorCondition(WORDS)])

_ID_PAGE = 1000  # point ids per scroll page
# A new shard memory-maps its files: creating one wrote 13 MB here, and its first writes fill a
# 32 MB WAL segment. On a disk without that room a write to a mapped page kills the process with
# SIGBUS (no message, no exception), so creation is refused below this much free space.
MIN_FREE_BYTES = 64 * 1024 * 1024
# Below this much free space no write reaches a loaded shard: one store's write to a mapped page
# of its WAL or storage killed the process with SIGBUS with about 200 KB free on a tmpfs, after
# SQLite had committed the memory. The write stays queued in SQLite's outbox instead, and is
# replayed once there is room. The margin covers a batch of ``index_replication.COPY_BATCH`` points.
MIN_WRITE_FREE_BYTES = 16 * 1024 * 1024

# Edge evicts a shard's files from the page cache when the shard is dropped (closed, or freed by
# the interpreter's teardown), so the next process to load it reads it all from disk again: at
# 1,000,000 memories a load took 1.0 s instead of 0.3 s (docs/performance.md, "The shard left in
# the page cache"). A process that ends with ``os._exit`` once its system is closed (every
# command, server and hook of the console script) keeps its closed shards here instead, flushed
# and still locked: ``os._exit`` runs no destructor, and the kernel drops the lock. Opened again in
# this process, a kept shard is closed first.
_kept_until_exit: dict[Path, tuple[qe.EdgeShard, Any]] | None = None


def keep_shards_until_exit() -> None:
    """From now on, closing a shard in this process flushes it and keeps it open and locked: only
    for a process that ends with ``os._exit`` after closing (``memory_system.serving.exit_now``)."""
    global _kept_until_exit
    if _kept_until_exit is None:
        _kept_until_exit = {}


def _close_kept(path: Path) -> None:
    """Close the shard at ``path`` this process kept (``keep_shards_until_exit``), if it did."""
    kept = (_kept_until_exit or {}).pop(path.resolve(), None)
    if kept is not None:
        shard, guard = kept
        with contextlib.suppress(Exception):  # it was flushed; closing only lets go of it
            shard.close()
        fcntl.flock(guard, fcntl.LOCK_UN)
        guard.close()


class IndexWatcher(Protocol):
    """Told of every write to the shard; builds the index elsewhere (``replicas.index_build``)."""

    def wrote(self, count: int) -> None: ...

    @property
    def building(self) -> int | None:
        """The pid of the process building a new index, if one runs."""
        ...

    def close(self) -> None: ...


# A shard built in the background is refused if it holds fewer points than this share of the
# served one's (after the writes made meanwhile): it was copied from SQLite, which keeps every
# vector, so only points SQLite does not know (left by a crash) may be missing from it.
_ADOPT_MIN_SHARE = 0.99


def free_bytes(path: Path) -> int:
    """Free space for this user on the filesystem holding ``path``."""
    return shutil.disk_usage(path).free


class EdgeVectorStore:
    """A Qdrant Edge shard in ``path``: 384-d cosine, keyword payload indexes, WAL on.

    Only one process may open a shard; a second gets ``StoreLockedError``. A shard built in
    another process can replace this one while it serves (``journal`` then ``adopt``).
    """

    def __init__(self, path: Path, dimension: int = 384) -> None:
        self.path = path
        self._dimension = dimension
        # Held around every use of the shard, so that ``adopt`` swaps it between two calls.
        self._swap = threading.RLock()
        self._journal: list[qe.UpdateOperation] | None = None
        self._sessions: bool | None = None  # has_sessions, once looked at (per shard loaded)
        self._unindexed = UnindexedPoints(path)
        self.watcher: IndexWatcher | None = None
        path.parent.mkdir(parents=True, exist_ok=True)
        _close_kept(path)
        # The owner holds this lock from before opening the shard until after it is flushed and
        # closed: the shard's own WAL lock is released while close() still writes, and a process
        # loading it in that moment saw points vanish. The OS drops the lock if the owner dies.
        self._guard = lock_file(path)
        try:
            fcntl.flock(self._guard, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._guard.close()
            raise locked(path) from None
        try:
            self._shard = self._open()
        except BaseException:
            self._release()
            raise

    def _release(self) -> None:
        fcntl.flock(self._guard, fcntl.LOCK_UN)
        self._guard.close()

    @property
    def previous_path(self) -> Path:
        """Where ``adopt`` moves the shard it replaces (deleted once the new one is loaded)."""
        return self.path.with_name(f"{self.path.name}.previous")

    def _open(self) -> qe.EdgeShard:
        # Any content means a shard lives here: load it (its config file may be rewritten at the
        # moment another process closes it; a create here would start an empty shard over it).
        if not self.path.exists() and self.previous_path.is_dir():
            self.previous_path.rename(self.path)  # a process died between adopt's two renames
        try:
            existing = self.path.is_dir() and any(self.path.iterdir())
        except OSError as exc:
            raise classify(exc, self.path) from exc
        if not existing:
            return self._create()
        has_words = has_words_vector(self.path)
        try:
            shard = qe.EdgeShard.load(
                str(self.path), shard_config(self._dimension, stored_datatype(self.path), words=has_words)
            )
            if not has_words:
                # A shard made before words were indexed gets their (empty) sparse vector; its
                # points get words as they are written again (doctor --repair rewrites them all).
                shard.update(qe.UpdateOperation.create_sparse_vector(WORDS, qe.Modifier.Idf))
        except Exception as exc:  # the Rust core raises bare Exception; classify it here
            error = classify(exc, self.path)
            raise (damaged(self.path, exc) if type(error) is StorageError else error) from exc
        return shard

    def _create(self) -> qe.EdgeShard:
        self._check_room()
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            shard = qe.EdgeShard.create(
                str(self.path), shard_config(self._dimension, qe.VectorStorageDatatype.Float16)
            )
            for name, kind in INDEXED_FIELDS.items():
                shard.update(qe.UpdateOperation.create_field_index(name, payload_index(kind)))
        except Exception as exc:  # the Rust core raises bare Exception; classify it here
            raise classify(exc, self.path) from exc
        return shard

    def _check_room(self) -> None:
        free = free_bytes(self.path.parent)
        if free < MIN_FREE_BYTES:
            raise StorageError(
                f"Not enough free space to create the embedded vector store in {self.path}: "
                f"{free / 2**20:.1f} MB free on its disk, {MIN_FREE_BYTES // 2**20} MB needed (its files "
                "are memory-mapped, and a full disk would crash the process). Free some space or set "
                "COGNITIVE_MEMORY_DATA_DIR to a disk with room; what SQLite holds is kept.",
                code="no_space",
            )

    def _check_room_to_write(self) -> None:
        """Refuse a write (``disk_full``) the disk may have no room for (``MIN_WRITE_FREE_BYTES``)."""
        try:
            free = free_bytes(self.path)
        except OSError as exc:
            raise classify(exc, self.path) from exc
        if free < MIN_WRITE_FREE_BYTES:
            raise StorageError(
                f"The disk holding the vector store in {self.path} is nearly full ({free // 1024} KB free, "
                f"{MIN_WRITE_FREE_BYTES // 2**20} MB needed to write to it safely): the write waits in "
                "SQLite's queue and is replayed once there is room.",
                code="disk_full",
            )

    def upsert(self, points: Sequence[VectorPoint]) -> None:
        if not points:
            return
        check_points(points, self._dimension)  # Edge raises a bare ValueError on an id it cannot parse
        batch = [qe.Point(p.id, vectors_of(p), dict(p.payload)) for p in points]
        self._write(qe.UpdateOperation.upsert_points(batch), [p.id for p in points])

    def delete(self, ids: Sequence[str]) -> None:
        held: list[Any] = [point_id for point_id in ids if is_point_id(point_id)]
        if held:
            self._write(qe.UpdateOperation.delete_points(held), held, deleted=True)

    def update_words(self, words: Mapping[str, SparseVector]) -> list[str]:
        asked = [point_id for point_id in words if is_point_id(point_id)]
        try:
            self._write_words(words, asked)
        except StorageError:
            # Edge refuses an update naming a point it lacks (after applying those before it, which
            # is harmless: the words are the same), so ask which it holds and write those again.
            held = {str(record.id) for record in self._call("retrieve", asked, False, False)}
            asked = [point_id for point_id in asked if point_id in held]
            self._write_words(words, asked)
        return [point_id for point_id in words if point_id not in asked]

    def _write_words(self, words: Mapping[str, SparseVector], ids: Sequence[str]) -> None:
        worded = [point_id for point_id in ids if words[point_id]]
        unworded: list[Any] = [point_id for point_id in ids if not words[point_id]]
        # Either write moves the point out of an indexed segment, as an upsert does.
        if worded:
            vectors = [qe.PointVectors(i, {WORDS: edge_words(words[i])}) for i in worded]
            self._write(qe.UpdateOperation.update_vectors(vectors), worded)
        if unworded:
            self._write(qe.UpdateOperation.delete_vectors(unworded, [WORDS]), unworded)

    def _write(self, operation: qe.UpdateOperation, ids: Sequence[str], *, deleted: bool = False) -> None:
        self._check_room_to_write()
        with self._swap:
            self._call("update", operation)
            if self._journal is not None:
                self._journal.append(operation)
            self._unindexed.wrote(ids, deleted=deleted)
        if self.watcher is not None:
            self.watcher.wrote(len(ids))

    def unindexed(self) -> tuple[int, int]:
        """(points, points searched exactly because no HNSW index covers them yet): Edge's count,
        or the points written since the index last covered them if more (``edge_unindexed``);
        old copies in excess of the points show at least as many moved."""
        return self._unindexed_in(self._call("info"))

    def _unindexed_in(self, shard: Any) -> tuple[int, int]:
        """``unindexed`` from the shard's ``info``."""
        points = int(shard.points_count)
        counted = points - self._indexed_dense(shard)
        with self._swap:
            written = self._unindexed.count()
        return points, min(points, max(counted, -counted, written))

    def heap_loaded(self) -> int:
        """How many indexed segments an older layout holds on the heap (``edge_layout.heap_loaded``):
        a rebuild of the shard maps them instead."""
        with self._swap:
            return heap_loaded(self.path)

    def worded(self) -> int:
        """How many points have words (a sparse vector)."""
        return int(self._call("count", qe.CountRequest(exact=True, filter=_WORDED)))

    def _indexed_dense(self, shard: Any) -> int:
        """Dense vectors an HNSW index covers: Edge counts every sparse vector as indexed too."""
        return int(shard.indexed_vectors_count) - self.worded()

    def journal(self) -> None:
        """Record the writes from now on, for ``adopt`` to apply to a shard built meanwhile from
        SQLite (a write recorded twice is harmless: upserts and deletes are idempotent)."""
        with self._swap:
            self._journal = []
            self._unindexed.journal()

    def drop_journal(self) -> None:
        with self._swap:
            self._journal = None
            self._unindexed.drop_journal()

    def adopt(self, built: Path) -> None:
        """Serve the shard in ``built`` (made by ``journal``'s caller from SQLite, indexed) from
        now on: this one is closed and moved aside, the built one takes its path and gets the
        writes made since ``journal``. Calls wait meanwhile (a load: 0.3 s at 100k vectors)."""
        with self._swap:
            journal, self._journal = self._journal or [], None
            served = self.count()
            self._call("flush")
            self._shard.close()
            try:
                self._take(built)
                for operation in journal:
                    self._call("update", operation)
                if self.count() < served * _ADOPT_MIN_SHARE:
                    self._shard.close()
                    self._give_back(built)
                    raise StorageError(f"it holds {self.count()} vectors where {served} are served")
            except (OSError, StorageError) as exc:
                # The served shard (it got every write, the journal only copied them) serves on.
                self._shard = self._open()
                raise StorageError(f"Could not swap in the index built in {built}: {exc}") from exc
            self._unindexed.adopted()  # the built shard's index covers all but the journal's writes
            self._sessions = None  # the built shard has them (made now); looked at again anyway
        shutil.rmtree(self.previous_path, ignore_errors=True)

    def _take(self, built: Path) -> None:
        """Put ``built`` at this store's path and open it; on failure the old shard is back there."""
        shutil.rmtree(self.previous_path, ignore_errors=True)
        self.path.rename(self.previous_path)
        try:
            built.rename(self.path)
        except OSError:
            self.previous_path.rename(self.path)
            raise
        try:
            self._shard = self._open()
        except StorageError:
            self._give_back(built)
            raise

    def _give_back(self, built: Path) -> None:
        """Undo ``_take``'s renames (the shards closed): the served shard is at this path again."""
        self.path.rename(built)
        self.previous_path.rename(self.path)

    def search(
        self, vector: Vector, limit: int, where: VectorFilter | None = None, *, precise: bool = False
    ) -> list[VectorHit]:
        return _nearest_hits(self._call("query", nearest_request(vector, limit, where, precise)))

    def search_many(
        self, vectors: Sequence[Vector], limit: int, where: VectorFilter | None = None
    ) -> list[list[VectorHit]]:
        if not vectors:
            return []
        requests = [nearest_request(vector, limit, where, False) for vector in vectors]
        return [_nearest_hits(hits) for hits in self._call("query_batch", qe.QueryBatchRequest(requests))]

    def search_with_words(
        self,
        vector: Vector,
        words: SparseVector,
        limit: int,
        where: VectorFilter | None = None,
        *,
        precise: bool = False,
    ) -> tuple[list[VectorHit], list[VectorHit]]:
        if not words:
            return self.search(vector, limit, where, precise=precise), []
        matches = qe.QueryRequest(
            limit=limit,
            query=qe.Query.Nearest(qe.SparseVector(list(words.indices), list(words.values)), using=WORDS),
            filter=edge_filter(where),
            with_payload=False,
            with_vector=False,
        )
        nearest, matched = self._call(
            "query_batch", qe.QueryBatchRequest([nearest_request(vector, limit, where, precise), matches])
        )
        return _nearest_hits(nearest), [VectorHit(str(hit.id), float(hit.score)) for hit in matched]

    def count(self) -> int:
        # Without a filter Edge's estimate is the sum of each segment's live points, which is the
        # count itself: a point written again is deleted from the segment it leaves. The exact
        # count reads every point id (0.1 s at 1,000,000), on every status and at the first open.
        return int(self._call("count", qe.CountRequest(exact=False)))

    def ids(self) -> list[str]:
        """Every point id, scrolled a page at a time."""
        found: list[str] = []
        offset: Any = None
        while True:
            request = qe.ScrollRequest(offset=offset, limit=_ID_PAGE, with_payload=False, with_vector=False)
            records, offset = self._call("scroll", request)
            found.extend(str(record.id) for record in records)
            if offset is None:
                return found

    def info(self) -> VectorStoreInfo:
        shard = self._call("info")
        points, unindexed = self._unindexed_in(shard)
        size = sum(
            f.stat().st_blocks * 512 for f in self.path.rglob("*") if f.is_file()
        )  # allocated, not sparse size
        details = {
            "segments": shard.segments_count,
            "indexed_vectors": points - unindexed,
            "worded_points": self.worded(),
            "payload_indexes": sorted(shard.payload_schema),
        }
        if self.watcher is not None and self.watcher.building is not None:
            details["index_build_pid"] = self.watcher.building
        return VectorStoreInfo(
            "qdrant-edge", "embedded", str(self.path), "ok", shard.points_count, size, details
        )

    def build_index(self, min_unindexed: int) -> bool:
        """Run Edge's optimizers (HNSW for large segments) if enough vectors are unindexed.

        Edge never indexes by itself, and exact search grows with the store. ``optimize()`` holds
        the GIL while it runs (seconds to tens of seconds for a large store: docs/performance.md,
        "Measurements behind the code"), so only bulk paths call this.
        """
        if self.unindexed()[1] < min_unindexed:
            return False
        self._check_room_to_write()
        with self._swap:
            self._call("optimize")
            self._unindexed.indexed()
        return True

    def has_sessions(self) -> bool:
        """Whether the shard has the payload index on ``session_id``: a shard gets it when it is
        made (``INDEXED_FIELDS``) or once every point was written again with its session
        (``mark_sessions``), never before, so an older shard's index is the mark of a whole one."""
        with self._swap:
            if self._sessions is None:
                self._sessions = SESSION_FIELD in self._call("info").payload_schema
            return self._sessions

    def mark_sessions(self) -> None:
        self._check_room_to_write()
        index = qe.UpdateOperation.create_field_index(
            SESSION_FIELD, payload_index(INDEXED_FIELDS[SESSION_FIELD])
        )
        with self._swap:
            self._call("update", index)
            self._sessions = True

    def close(self) -> None:
        if self.watcher is not None:
            self.watcher.close()
        kept = _kept_until_exit
        try:
            with self._swap:
                self._call("flush")
                if kept is None:
                    self._shard.close()
                with contextlib.suppress(OSError):  # a count lost leaves Edge's own
                    self._unindexed.save()
        finally:
            if kept is None:
                self._release()
            else:
                kept[self.path.resolve()] = (self._shard, self._guard)

    def _call(self, method: str, *args: Any) -> Any:
        """Run the shard's ``method``, looked up under the lock: ``adopt`` may have replaced it."""
        try:
            with self._swap:
                return getattr(self._shard, method)(*args)
        except Exception as exc:  # the Rust core raises bare Exception
            raise classify(exc, self.path) from exc


def _nearest_hits(hits: Sequence[Any]) -> list[VectorHit]:
    # 16-bit vectors put a cosine within about 1e-3 of the exact one, and can put it past 1.
    return [VectorHit(str(hit.id), min(1.0, float(hit.score))) for hit in hits]
