"""One embedded vector store, any number of processes.

The embedded Qdrant Edge shard admits one opener (its WAL lock). The process that holds it, the
owner, also serves the other processes of the same data directory over a Unix socket
(``owner_server.py``); they use this class as clients. When the owner goes away (it exits, or is
killed), the next call of a client opens the shard itself and becomes the owner: the call is
retried once, nothing is lost (SQLite keeps every memory, and the outbox replays vector writes an
owner never confirmed).

An owner that is alive but does not answer (stopped with Ctrl-Z, or holding the GIL while it builds
the index) cannot be taken over: it still holds the lock. Every call to it has a deadline; past
it the call fails with ``StorageError`` (a write stays queued in the outbox, recall goes on by
words), and for ``retry_after`` seconds further calls fail at once instead of each waiting again.

    process A (owner) ── EdgeVectorStore ── OwnerServer ────┐
    process B (client) ── SharedVectorStore ── socket ──────┘
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from cognitive_memory.core.memory import Vector
from cognitive_memory.errors import RejectedPointsError, StorageError, StoreLockedError
from cognitive_memory.index.owner_server import OwnerServer, dispatch
from cognitive_memory.index.sparse import SparseVector
from cognitive_memory.index.store_messages import (
    pack_point,
    pack_vector,
    receive,
    send,
)
from cognitive_memory.index.vector_store import (
    VectorFilter,
    VectorHit,
    VectorPoint,
    VectorStore,
    VectorStoreInfo,
)
from cognitive_memory.processes import socket_peer, trusted_uid

__all__ = ["SharedVectorStore"]

logger = logging.getLogger(__name__)

# Operations that may legitimately run long at the owner, with their own deadline (seconds):
# building the HNSW index takes 11-45 s at 100k vectors here.
_SLOW_OPERATIONS = {"build_index": 600.0}


class SharedVectorStore:
    """A VectorStore that owns the embedded shard or reaches its owner, whichever is possible."""

    def __init__(
        self,
        open_local: Callable[[], VectorStore],
        socket_path: Path,
        *,
        wait: float = 5.0,
        attach_now: bool = True,
        deadline: float = 5.0,
        retry_after: float = 5.0,
    ) -> None:
        """``attach_now=False`` opens (or reaches) the store at the first call instead (loading a
        100k-vector shard takes 0.34 s and holds the GIL, so a background open would not help).
        ``deadline``: seconds the owner has to answer a call; after a call it missed, calls fail at
        once for ``retry_after`` seconds."""
        self._open_local = open_local
        self._socket_path = socket_path
        self._wait = wait
        self._deadline = deadline
        self._retry_after = retry_after
        self._stalled_until = 0.0
        self._stalled_message = ""
        self._owner_pid: int | None = None
        self._lock = threading.RLock()
        self._local: VectorStore | None = None
        self._server: OwnerServer | None = None
        self._connection: socket.socket | None = None
        self._on_takeover: Callable[[], object] | None = None
        self._took_over = False
        self._sessions = False  # has_sessions, once true
        if attach_now:
            self._attach()

    def when_taking_over(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` (outside any lock) after this process takes the store over from a
        dead owner: the owner may have died between a SQLite commit and its index write."""
        self._on_takeover = callback

    @property
    def is_owner(self) -> bool:
        return self._local is not None

    def _attach(self) -> None:
        """Open the shard (and serve it), or connect to the process that has it."""
        deadline = time.monotonic() + self._wait
        while True:
            try:
                local = self._open_local()
            except StoreLockedError:
                try:
                    self._connection = self._connect()
                    return
                except OSError:
                    if time.monotonic() > deadline:
                        raise StoreLockedError(
                            "The vector store is held by another process that does not answer on "
                            f"{self._socket_path}; stop stray memory_system processes and try again."
                        ) from None
                    time.sleep(0.05)
                    continue
            self._local = local
            self._server = OwnerServer(local, self._socket_path)
            logger.info("This process owns the vector store and serves it on %s", self._socket_path)
            return

    def _connect(self) -> socket.socket:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.settimeout(self._deadline)  # a stopped owner with a full backlog never accepts
        try:
            connection.connect(str(self._socket_path))
            peer = socket_peer(connection)
        except OSError:
            connection.close()
            raise
        if peer is not None and not trusted_uid(peer[1]):
            connection.close()
            raise StorageError(
                f"The vector store socket {self._socket_path} is served by a process of another user "
                f"(uid {peer[1]}, pid {peer[0]}); refusing to send memories to it. Remove the socket "
                "and its directory if you did not make them, and check who can write there."
            )
        self._owner_pid = peer[0] if peer is not None else None
        return connection

    def _call(self, op: str, **arguments: Any) -> Any:
        """Run one operation here (owner) or at the owner; if the owner goes away, take over."""
        with self._lock:
            result = self._call_locked({"op": op, **arguments})
            took_over, self._took_over = self._took_over, False
        if took_over and self._on_takeover is not None:
            self._on_takeover()
        return result

    def _call_locked(self, request: dict[str, Any]) -> Any:
        """A killed owner can still accept a connection for a moment while the kernel tears it
        down, so the take-over is retried until ``wait`` seconds have passed, not just once."""
        if self._local is None and self._connection is None:
            if time.monotonic() < self._stalled_until:
                raise StorageError(self._stalled_message)
            self._attach()  # not attached yet, or a take-over failed before: try now
        deadline = time.monotonic() + self._wait
        retries = 0
        while True:
            if self._local is not None:
                return dispatch(self._local, request)
            try:
                answer = self._ask(request)
            except TimeoutError:
                raise self._stalled(_SLOW_OPERATIONS.get(request["op"], self._deadline)) from None
            except (ConnectionError, OSError, ValueError):
                if time.monotonic() > deadline:
                    raise StorageError(
                        f"The process serving the vector store stopped answering for {self._wait:g} s."
                    ) from None
                if retries:
                    time.sleep(0.02)  # a dying owner: let the kernel finish releasing its lock
                retries += 1
                logger.info("The vector store's owner went away; taking over")
                self._drop_connection()
                self._attach()
                self._took_over = self._took_over or self._local is not None
                continue
            if not answer["ok"]:
                if "rejected" in answer:
                    raise RejectedPointsError(answer["message"], answer["rejected"])
                raise StorageError(answer["message"], code=answer["code"])
            return answer["result"]

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        connection = self._connection
        if connection is None:
            raise ConnectionError("not connected")
        connection.settimeout(_SLOW_OPERATIONS.get(request["op"], self._deadline))
        send(connection, request)
        return receive(connection)

    def _stalled(self, waited: float) -> StorageError:
        """The owner is alive (it holds the lock) but missed the deadline: drop the connection,
        whose answer may still come, and fail calls at once for ``retry_after`` seconds."""
        self._drop_connection()
        self._stalled_until = time.monotonic() + self._retry_after
        owner = f"process {self._owner_pid}" if self._owner_pid else "process"
        resume = f"; resume it with `kill -CONT {self._owner_pid}`" if self._owner_pid else ""
        self._stalled_message = (
            f"The {owner} serving the vector store did not answer within {waited:g} s: it "
            f"is stopped (Ctrl-Z{resume}) or busy building the index. Memories are still stored in "
            f"SQLite with their vectors queued, and recall works by words; the store is asked again "
            f"after {self._retry_after:g} s."
        )
        logger.warning("%s", self._stalled_message)
        return StorageError(self._stalled_message)

    def _drop_connection(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def upsert(self, points: Sequence[VectorPoint]) -> None:
        if points:
            self._call("upsert", points=[pack_point(p) for p in points])

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            self._call("delete", ids=list(ids))

    def update_words(self, words: Mapping[str, SparseVector]) -> list[str]:
        if not words:
            return []
        packed = {point_id: [held.indices, held.values] for point_id, held in words.items()}
        return [str(point_id) for point_id in self._call("update_words", words=packed)]

    def search(
        self, vector: Vector, limit: int, where: VectorFilter | None = None, *, precise: bool = False
    ) -> list[VectorHit]:
        conditions = asdict(where) if where else None
        hits = self._call(
            "search", vector=pack_vector(vector), limit=limit, where=conditions, precise=precise
        )
        return [VectorHit(str(hit_id), float(score)) for hit_id, score in hits]

    def search_many(
        self, vectors: Sequence[Vector], limit: int, where: VectorFilter | None = None
    ) -> list[list[VectorHit]]:
        if not vectors:
            return []
        packed = [pack_vector(vector) for vector in vectors]
        found = self._call("search_many", vectors=packed, limit=limit, where=asdict(where) if where else None)
        return [[VectorHit(str(i), float(score)) for i, score in hits] for hits in found]

    def search_with_words(
        self,
        vector: Vector,
        words: SparseVector,
        limit: int,
        where: VectorFilter | None = None,
        *,
        precise: bool = False,
    ) -> tuple[list[VectorHit], list[VectorHit]]:
        where_ = asdict(where) if where else None
        packed = pack_vector(vector)
        both = self._call(
            "search_with_words",
            vector=packed,
            words=[words.indices, words.values],
            limit=limit,
            where=where_,
            precise=precise,
        )
        nearest, matched = ([VectorHit(str(i), float(score)) for i, score in hits] for hits in both)
        return nearest, matched

    def count(self) -> int:
        return int(self._call("count"))

    def ids(self) -> list[str]:
        return [str(point_id) for point_id in self._call("ids")]

    def info(self) -> VectorStoreInfo:
        return VectorStoreInfo(**self._call("info"))

    def build_index(self, min_unindexed: int) -> bool:
        return bool(self._call("build_index", min_unindexed=min_unindexed))

    def has_sessions(self) -> bool:
        """Asked of the owner until it says so; kept once true (a shard never loses the mark, and a
        shard swapped in is made with it), so a recall of a client asks nothing more."""
        if not self._sessions:
            self._sessions = bool(self._call("has_sessions"))
        return self._sessions

    def mark_sessions(self) -> None:
        self._call("mark_sessions")

    def stop_serving(self) -> None:
        """Stop serving the store to other processes (its socket goes): this process ends next,
        and they take the store over once it is gone."""
        with self._lock:
            if self._server is not None:
                self._server.close()
                self._server = None

    def close(self) -> None:
        with self._lock:
            self.stop_serving()
            if self._local is not None:
                self._local.close()
                self._local = None
            self._drop_connection()
