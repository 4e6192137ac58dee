"""What every table kept in memory for recall shares: built from one read of the store (on a
thread at start), brought up to the change log's head inside each read of recall, and the store
read instead while it is not built or cannot follow.

A table follows the kinds of change it depends on (``ChangeLog.since``: two index lookups when
nothing changed). When the log no longer reaches back to the table (trimmed past it, or a database
put back from a backup) or more changed than reading them again would be worth, the table is
dropped and built again on a thread; until it is, reads go to the store and the table says so
(``state``: ``degraded``), never answering from stale state.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Generic, Literal, Protocol, TypeVar

from cognitive_memory.core.store import StoreOfRecord
from cognitive_memory.core.store.values import ChangeKind
from cognitive_memory.errors import StorageError

__all__ = ["FollowedTable", "FollowingState", "Table"]

logger = logging.getLogger(__name__)

FollowingState = Literal["building", "following", "degraded"]
R = TypeVar("R")


class Table(Protocol):
    """A table kept in step: ``seq``, the last change it holds."""

    seq: int


TableT = TypeVar("TableT", bound=Table)


class FollowedTable(Generic[TableT]):
    """A table kept in step with the store by the change log's ``kinds`` of change: ``_read``
    answers from it once built and caught up, from the store otherwise. A subclass says how the
    table is read whole (``_read_whole``) and how it takes the memories that changed (``_take``)."""

    kinds: frozenset[ChangeKind] = frozenset()
    # More memories changed than this since the last read: the table is built again (on a
    # thread) rather than their rows read inside one recall.
    rebuild_after = 20_000
    name = "table"

    def __init__(self, records: StoreOfRecord) -> None:
        self._records = records
        self._table: TableT | None = None
        self._lock = threading.Lock()
        self._building = threading.Lock()
        self._state: FollowingState = "building"

    @property
    def ready(self) -> bool:
        """Whether reads come from the table (built, and following the log)."""
        return self._table is not None

    @property
    def state(self) -> FollowingState:
        """``building`` until first built, ``following`` once it answers, ``degraded`` while
        it could not follow the log and the store answers until it is built again."""
        return self._state

    def build(self) -> None:
        """Read the table whole, in one read of the store with the change log's head (a build
        already running is waited for, not repeated)."""
        with self._building:
            table = self._read_whole()
            with self._lock:
                self._table = table
                self._state = "following"

    def build_in_background(self, delay: float = 0.0) -> threading.Thread:
        """Build the table on a daemon thread, ``delay`` seconds from now; reads go to the store
        until it is ready."""
        thread = threading.Thread(target=self._build_logged, args=(delay,), name=self.name, daemon=True)
        thread.start()
        return thread

    def _build_logged(self, delay: float) -> None:
        time.sleep(delay)
        try:
            self.build()
        except StorageError as exc:
            logger.warning("The %s was not read into memory (recall reads the store): %s", self.name, exc)

    def _read(self, from_table: Callable[[TableT], R], from_store: Callable[[], R]) -> R:
        """``from_table`` of the table brought up to the log's head, else ``from_store``; made
        inside the caller's read of the store (``together``), so both see one snapshot."""
        with self._lock:
            table = self._table
            if table is None or not self._caught_up(table):
                return from_store()
            return from_table(table)

    def _caught_up(self, table: TableT) -> bool:
        """Bring ``table`` up to the change log's head; False when it cannot be (it is dropped and
        built again on a thread, and this read goes to the store)."""
        found = self._records.changes.since(table.seq)
        kinds = self.kinds
        changed = list(dict.fromkeys(c.memory_id for c in found.changes if c.kind in kinds))
        if found.whole or len(changed) > self.rebuild_after:
            why = "the change log no longer reaches back to it" if found.whole else "too much changed"
            logger.warning("The %s is read again; recall reads the store until then (%s)", self.name, why)
            self._table = None
            self._state = "degraded"
            self.build_in_background()
            return False
        if changed:
            self._take(table, found.head, changed)
        table.seq = found.head
        return True

    def _read_whole(self) -> TableT:
        raise NotImplementedError

    def _take(self, table: TableT, seq: int, changed: Sequence[str]) -> None:
        raise NotImplementedError
