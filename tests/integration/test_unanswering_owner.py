"""An owner that accepts connections but never answers (stopped): calls get a deadline."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import numpy as np
import pytest

from cognitive_memory.errors import StorageError, StoreLockedError
from cognitive_memory.index import ArrayVectorStore, VectorPoint
from cognitive_memory.index.shared_store import SharedVectorStore


def locked() -> ArrayVectorStore:
    raise StoreLockedError("held by the stopped owner")


def test_a_silent_owner_fails_the_call_then_fails_calls_at_once_until_retry(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sock"
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.bind(str(path))
    silent.listen(16)
    accepted: list[socket.socket] = []

    def accept_and_say_nothing() -> None:
        while True:
            try:
                accepted.append(silent.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept_and_say_nothing, daemon=True).start()
    store = SharedVectorStore(locked, path, deadline=0.3, retry_after=60)
    try:
        with pytest.raises(StorageError, match=r"did not answer within 0\.3 s"):
            store.upsert([VectorPoint("a", np.ones(4, dtype=np.float32), {})])
        with pytest.raises(StorageError, match="did not answer"):
            store.count()  # at once: no new connection is made while the owner is known to be silent
        assert len(accepted) == 1
    finally:
        store.close()
        silent.close()
        for connection in accepted:
            connection.close()
