"""Whether the vector index holds every memory it should: SQLite's memories, less those whose
vector write is still queued (the outbox writes them).

An index falls short when its files were lost or an older copy was put back (the process that
owns an embedded shard rebuilds it from SQLite in the background; `doctor --repair` does it for
any index). Until it is whole, recall would miss what it lacks without a word, so it searches the
words in SQLite instead and says its answer may be incomplete (``Retriever.retrieve``).

Looked at when the index opens, and again at most every ``RECHECK_SECONDS`` while it falls
short: a complete index costs recall nothing. A shortfall is believed only when two looks in a
row agree, since the two counts are read one after the other while writes go on.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from cognitive_memory.errors import CognitiveMemoryError
from cognitive_memory.index.vector_store import VectorStore

__all__ = ["RECHECK_SECONDS", "IndexCoverage", "Shortfall"]

RECHECK_SECONDS = 30.0

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
        """The shortfall as last looked at: looked at first if never, again if it is short and was
        looked at ``RECHECK_SECONDS`` ago."""
        looked_at = self._looked_at
        if looked_at is None or (
            self._shortfall is not None and self._clock() - looked_at >= RECHECK_SECONDS
        ):
            return self.look()
        return self._shortfall

    def _measure(self) -> Shortfall | None:
        try:
            expected = self._expected()  # first: a store in between raises the index's count only
            held = self._vectors.count()
        except CognitiveMemoryError:
            return None
        return (held, expected) if held < expected else None
