"""The owner's side of the shared vector store (``shared_store.py``): the process that holds the
embedded shard serves it to the other processes of the data directory on a Unix socket, one
thread per client; each request runs against its store (``dispatch``) and is answered with its
result or its error, so nothing a request meets ends the thread."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any

from cognitive_memory.errors import RejectedPointsError, StorageError
from cognitive_memory.index.sparse import SparseVector
from cognitive_memory.index.store_messages import filter_from, point_from, receive, send, unpack_vector
from cognitive_memory.index.vector_store import VectorStore
from cognitive_memory.processes import accept_trusted, listen_privately

__all__ = ["OwnerServer", "dispatch"]

logger = logging.getLogger(__name__)


def dispatch(store: VectorStore, request: dict[str, Any]) -> Any:
    """Run one request against the owner's store; the answer is plain JSON."""
    op = request["op"]
    if op == "upsert":
        store.upsert([point_from(p) for p in request["points"]])
        return None
    if op == "delete":
        store.delete(request["ids"])
        return None
    if op == "update_words":
        return store.update_words({i: SparseVector(*map(tuple, w)) for i, w in request["words"].items()})
    if op == "search":
        hits = store.search(
            unpack_vector(request["vector"]),
            request["limit"],
            filter_from(request["where"]),
            precise=bool(request.get("precise", False)),
        )
        return [[hit.id, hit.score] for hit in hits]
    if op == "search_many":
        found = store.search_many(
            [unpack_vector(v) for v in request["vectors"]], request["limit"], filter_from(request["where"])
        )
        return [[[hit.id, hit.score] for hit in hits] for hits in found]
    if op == "search_with_words":
        both = store.search_with_words(
            unpack_vector(request["vector"]),
            SparseVector(*map(tuple, request["words"])),
            request["limit"],
            filter_from(request["where"]),
            precise=bool(request.get("precise", False)),
        )
        return [[[hit.id, hit.score] for hit in hits] for hits in both]
    if op == "count":
        return store.count()
    if op == "ids":
        return store.ids()
    if op == "build_index":
        return store.build_index(request["min_unindexed"])
    if op == "has_sessions":
        return store.has_sessions()
    if op == "mark_sessions":
        store.mark_sessions()
        return None
    if op == "info":
        info = asdict(store.info())
        info["details"] = {**info["details"], "served_by_pid": os.getpid()}
        return info
    raise StorageError(f"unknown vector store operation {op!r}")


def _answer_to(store: VectorStore, request: dict[str, Any]) -> dict[str, Any]:
    """The answer to one request: its result, or the error it met. This is the top of a thread
    that serves other processes, so nothing a request meets ends it: a failure the store did not
    foresee (a malformed request, a bug) is logged once here and answered as an error of that
    request, and the next request is served as usual."""
    try:
        return {"ok": True, "result": dispatch(store, request)}
    except RejectedPointsError as exc:
        return {"ok": False, "code": exc.code, "message": exc.message, "rejected": exc.rejected}
    except StorageError as exc:
        return {"ok": False, "code": exc.code, "message": exc.message}
    except Exception as exc:  # the thread's top-level handler (see the docstring)
        op = request.get("op") if isinstance(request, dict) else None
        logger.exception("The vector store's owner failed a %r request", op)
        message = f"The process serving the vector store failed this request: {type(exc).__name__}: {exc}"
        return {"ok": False, "code": "owner_error", "message": message}


class OwnerServer:
    """Serves the owner's store to other processes on a Unix socket (threads, one per client)."""

    def __init__(self, store: VectorStore, path: Path) -> None:
        self._store = store
        self._path = path
        # A socket left at ``path`` was a dead owner's: the WAL lock this process holds proves it.
        self._listener = listen_privately(path)
        self._closed = threading.Event()
        self._connections: set[socket.socket] = set()
        self._guard = threading.Lock()
        threading.Thread(target=self._accept, name="vector-store-owner", daemon=True).start()

    def _accept(self) -> None:
        accept_trusted(self._listener, self._closed, self._start, "the vector store")

    def _start(self, connection: socket.socket) -> None:
        with self._guard:
            self._connections.add(connection)
        threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            self._answer(connection)
        with self._guard:
            self._connections.discard(connection)

    def _answer(self, connection: socket.socket) -> None:
        while not self._closed.is_set():
            try:
                request = receive(connection)
            except (ConnectionError, OSError, ValueError):
                return
            try:
                send(connection, _answer_to(self._store, request))
            except OSError:
                return

    def close(self) -> None:
        """Stop serving; connected clients see the connection end and take the store over."""
        self._closed.set()
        self._listener.close()
        self._path.unlink(missing_ok=True)
        with self._guard:
            for connection in self._connections:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)
            self._connections.clear()
