"""What recall used, written behind it.

Each recall counts its core memories as used (access count, last access, hence strength) and
strengthens the co-recall links between them. Those writes wait in memory and go to the store in
one transaction for all that waited, in the order they were made, on a thread of their own. That
thread runs at the lowest CPU priority (``processes.yield_cpu``), so on a busy machine recalls come
first: back-to-back recalls on two cores were slowed by the writes of the ones before them, 2-3 ms
at p50 and 8 ms or more at p95 over stdio at 1,000,000 memories (docs/performance.md, "Uses written
behind recall"). When recall pauses, the writes catch up at once. ``flush`` (and so
``CognitiveSystem.flush`` and ``close``) writes what still waits on the calling thread, at its own
priority: a short-lived command or hook never waits for a starved thread. A process that dies
loses the uses not yet written (never a memory): at most ``max_pending``, since a recall that
finds that many waiting waits for them to be written.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Executor

from cognitive_memory.core.uses import Use

__all__ = ["UseLog"]

MAX_PENDING = 2_000


class UseLog:
    """Uses waiting to be written by ``write`` (one call per batch, on ``executor``)."""

    def __init__(
        self, write: Callable[[Sequence[Use]], None], executor: Executor, *, max_pending: int = MAX_PENDING
    ) -> None:
        self._write = write
        self._executor = executor
        self.max_pending = max_pending
        self._lock = threading.Lock()
        self._pending: list[Use] = []
        self._scheduled = False

    def add(self, use: Use) -> None:
        """Have ``use`` written behind the caller; with ``max_pending`` uses waiting, wait until
        they are written."""
        with self._lock:
            self._pending.append(use)
            full = len(self._pending) >= self.max_pending
            drain = None if self._scheduled else self._executor.submit(self._drain)
            self._scheduled = True
        if full:
            (drain or self._executor.submit(self._drain)).result()

    def flush(self) -> None:
        """Write every use that waits, on the calling thread, after any batch the writer has
        already taken (so they land in order)."""
        with self._lock:
            batch, self._pending = self._pending, []
        with contextlib.suppress(RuntimeError):  # shut down: it wrote every batch it had taken
            self._executor.submit(lambda: None).result()
        if batch:
            self._write(batch)

    def pending(self) -> int:
        """How many uses wait to be written."""
        with self._lock:
            return len(self._pending)

    def _drain(self) -> None:
        """On the executor: write every use waiting, in one batch."""
        with self._lock:
            batch, self._pending = self._pending, []
            self._scheduled = False
        if batch:
            self._write(batch)
