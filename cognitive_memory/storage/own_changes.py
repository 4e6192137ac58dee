"""Which rows of the change log this store object wrote (``OwnChanges``), so that what follows
the log for this process (``replicas/index_following.py``) passes over them: its own writes reached
its own index as they committed (``IndexReplication``, and the vector outbox when the index
refused one).

Writes are one at a time across every process (SQLite's one writer, PostgreSQL's advisory write
lock, both taken before the transaction reads the log), so the rows a write transaction appends
are exactly those after the log's last seq when it began, through the last when it commits: a
range no other writer's row falls into. The ranges are kept in order, merged when they touch; the
oldest go first past ``KEPT`` of them (a change no longer known as ours is only applied again).
"""

from __future__ import annotations

import bisect
import threading

__all__ = ["KEPT", "OwnChanges"]

KEPT = 4096  # ranges remembered at most


class OwnChanges:
    """The seq ranges ``(after, through]`` this store object's write transactions appended."""

    def __init__(self) -> None:
        self._starts: list[int] = []  # each range's ``after``, ascending
        self._ends: list[int] = []  # each range's ``through``
        self._lock = threading.Lock()

    def add(self, after: int, through: int) -> None:
        """Record that one committed write appended the seqs ``after + 1`` to ``through``."""
        if through <= after:
            return
        with self._lock:
            if self._ends and self._ends[-1] >= after and self._starts[-1] <= after:
                self._ends[-1] = max(self._ends[-1], through)  # touches the last: one range
            else:
                at = bisect.bisect_left(self._starts, after)
                self._starts.insert(at, after)
                self._ends.insert(at, through)
            if len(self._starts) > KEPT:
                del self._starts[0], self._ends[0]

    def ours(self, seq: int) -> bool:
        """Whether ``seq`` was appended by one of this store object's writes (as far as kept)."""
        with self._lock:
            at = bisect.bisect_left(self._starts, seq) - 1
            return at >= 0 and self._starts[at] < seq <= self._ends[at]
