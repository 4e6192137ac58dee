"""The vector index opened ahead of its first use, on a thread.

A large embedded shard takes a while to load (about 1 s at 1,000,000 vectors, memory-mapped) and
holds the GIL meanwhile, so a server opens it once its first answer is out, while the model
loads (which mostly releases the GIL), instead of at the first recall.
"""

from __future__ import annotations

import logging
import threading
import time

from cognitive_memory.errors import CognitiveMemoryError
from cognitive_memory.index.coverage import IndexCoverage
from cognitive_memory.index.vector_store import VectorStore

__all__ = ["OPEN_AFTER", "IndexOpener"]

logger = logging.getLogger(__name__)

# Seconds between the call and the open: the answer that prompted it is written meanwhile.
OPEN_AFTER = 0.1


class IndexOpener:
    """Opens ``vectors`` (the embedded shard loads, or its owner is reached) once, on a thread, by
    a first call to it (a count: cheap once the store is open), then looks at whether it holds
    every memory (``coverage``), so that the first recall need not."""

    def __init__(self, vectors: VectorStore, coverage: IndexCoverage | None = None) -> None:
        self._vectors = vectors
        self._coverage = coverage
        self._started = False
        self._lock = threading.Lock()  # held while the index opens; close waits for it
        self._closed = False

    def open_in_background(self, delay: float = OPEN_AFTER) -> None:
        with self._lock:
            if self._started or self._closed:
                return
            self._started = True
            threading.Thread(target=self._open, args=(delay,), name="index-open", daemon=True).start()

    def _open(self, delay: float) -> None:
        time.sleep(delay)
        with self._lock:
            if self._closed:
                return
            try:
                self._vectors.count()
            except CognitiveMemoryError as exc:  # the first call that needs the index says it again
                logger.info("The vector index did not open ahead of its first use: %s", exc)
                return
            if self._coverage is not None:
                self._coverage.look()

    def close(self) -> None:
        """No open after this (one under way is waited for): the store is about to close."""
        with self._lock:
            self._closed = True
