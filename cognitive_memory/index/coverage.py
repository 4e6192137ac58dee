"""Whether the vector index holds every memory it should: SQLite's memories, less those whose
vector write is still queued (the outbox writes them).

An index falls short when its files were lost or an older copy was put back (the process that
owns an embedded shard rebuilds it from SQLite in the background; `doctor --repair` does it for
any index). Until it is whole, recall would miss what it lacks without a word, so it searches the
words in SQLite instead and says its answer may be incomplete (``Retriever.retrieve``).

Looked at when the index opens, again at most every ``RECHECK_SECONDS`` while it falls short,
and every ``WHOLE_RECHECK_SECONDS`` while it is whole: an index can fall short while a process
runs (a Qdrant server's collection dropped and made again empty by another process, or restored
from an older snapshot), and recall would miss what it lacks until the process restarts. A look
counts SQLite's memories (a quarter of a second for a table of 1,000,000 on a busy machine) and
the index's points, so a whole index is looked at on a thread of its own, while recall goes on
with the last look. A shortfall is believed only when two looks in a row agree, since the two
counts are read one after the other while writes go on.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from cognitive_memory.errors import CognitiveMemoryError
from cognitive_memory.index.vector_store import VectorStore

__all__ = ["RECHECK_SECONDS", "WHOLE_RECHECK_SECONDS", "IndexCoverage", "Shortfall"]

RECHECK_SECONDS = 30.0
WHOLE_RECHECK_SECONDS = 300.0

Shortfall = tuple[int, int]  # (vectors held, memories the index should hold)


class IndexCoverage:
    """The index's shortfall, if any, as last looked at (``expected``: SQLite's count)."""

    def __init__(
        self,
        vectors: VectorStore,
        expected: Callable[[], int],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._vectors = vectors
        self._expected = expected
        self._clock = clock
        self._lock = threading.Lock()
        self._looked_at: float | None = None
        self._shortfall: Shortfall | None = None
        self._aside: threading.Thread | None = None  # a look at a whole index, under way
        self._aside_lock = threading.Lock()  # not ``_lock``, which a look holds while it counts

    def look(self) -> Shortfall | None:
        """Count both sides now (twice when short); the shortfall, or None when the index is whole
        or cannot be counted (recall then finds it down by itself)."""
        with self._lock:
            shortfall = self._measure()
            if shortfall is not None:
                shortfall = self._measure()
            self._shortfall, self._looked_at = shortfall, self._clock()
            return shortfall

    def shortfall(self) -> Shortfall | None:
        """The shortfall as last looked at: looked at first if never, again if it was looked at
        ``RECHECK_SECONDS`` ago and found short; found whole ``WHOLE_RECHECK_SECONDS`` ago, looked
        at again on a thread (``look_aside``), the last look answering meanwhile."""
        looked_at, shortfall = self._looked_at, self._shortfall
        if looked_at is None:
            return self.look()
        if shortfall is not None and self._clock() - looked_at >= RECHECK_SECONDS:
            return self.look()
        if shortfall is None and self._clock() - looked_at >= WHOLE_RECHECK_SECONDS:
            self.look_aside()
        return shortfall

    def look_aside(self) -> None:
        """``look`` on a thread of its own, unless one is under way."""
        with self._aside_lock:
            if self._aside is not None and self._aside.is_alive():
                return
            self._aside = threading.Thread(target=self.look, name="index-coverage", daemon=True)
            self._aside.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for a look under way on its thread; True when none is."""
        aside = self._aside
        if aside is not None:
            aside.join(timeout)
        return aside is None or not aside.is_alive()

    def _measure(self) -> Shortfall | None:
        try:
            expected = self._expected()  # first: a store in between raises the index's count only
            held = self._vectors.count()
        except CognitiveMemoryError:
            return None
        return (held, expected) if held < expected else None
