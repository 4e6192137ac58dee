"""The links recall spreads activation over, held in memory and kept in step by the change log.

A recall reads the links of about a hundred candidates (``LinkReads.neighbourhood``): in SQLite
that is some 700 rows stepped through and the strongest weight of each pair kept in Python, the
largest read of a lived-in recall after the vector search. Here every memory's neighbourhood is
kept as it is read, the strongest weight per neighbour over every kind of link and, beside it,
over the links not in time, each memory's neighbours sorted by id: in compressed sparse rows
(one array of neighbours and one of weights, and where each memory's run starts and ends; plain
``array``s, whose items a short run reads faster than numpy's) built
from one read of the store, and a table of the memories whose links changed since, read again.

Before each read it asks the change log what changed since the last sequence number it has seen
(two index lookups when nothing did) and reads again the links of the memories the log names, in the
recall's own read of the store, so a link written by any process is in the very next recall.
Until it is built (``build``, on a thread at start), and while a log it can no longer follow
(trimmed past it, or a database put back) has it built again, reads go to the store.
"""

from __future__ import annotations

import logging
import threading
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from cognitive_memory.storage.associations import Graph, NeighbourRow
from cognitive_memory.storage.sqlite_store import SQLiteMemoryStore

__all__ = ["FollowedLinks", "LinkTable"]

logger = logging.getLogger(__name__)

# More memories changed than this since the last read: the table is built again (on a thread)
# rather than their links read one recall at a time.
REBUILD_AFTER = 20_000
_NO_RUN = (0, 0, 0, 0)


@dataclass
class LinkTable:
    """Every memory's neighbourhood as of change ``seq``: the built rows, and ``changed``, the
    neighbourhoods read again since (an empty pair for a memory that lost its links)."""

    seq: int
    names: list[str]
    targets: array[int]
    weights: array[float]
    timeless_targets: array[int]
    timeless_weights: array[float]
    runs: dict[str, tuple[int, int, int, int]]
    changed: dict[str, tuple[list[tuple[str, float]], list[tuple[str, float]]]] = field(default_factory=dict)

    @classmethod
    def read(cls, seq: int, rows: Iterator[NeighbourRow]) -> LinkTable:
        """The table of ``rows`` (by memory, then neighbour id), as of change ``seq``."""
        slots: dict[str, int] = {}
        names: list[str] = []
        targets, weights = array("i"), array("d")
        timeless_targets, timeless_weights = array("i"), array("d")
        runs: dict[str, tuple[int, int, int, int]] = {}
        current, start, timeless_start = None, 0, 0
        for source, target, best, timeless in rows:
            if source != current:
                if current is not None:
                    runs[current] = (start, len(targets), timeless_start, len(timeless_targets))
                current, start, timeless_start = source, len(targets), len(timeless_targets)
            slot = slots.get(target)
            if slot is None:
                slot = slots[target] = len(names)
                names.append(target)
            targets.append(slot)
            weights.append(best)
            if timeless is not None:
                timeless_targets.append(slot)
                timeless_weights.append(timeless)
        if current is not None:
            runs[current] = (start, len(targets), timeless_start, len(timeless_targets))
        return cls(seq, names, targets, weights, timeless_targets, timeless_weights, runs)

    def neighbourhood(self, ids: Sequence[str]) -> tuple[Graph, Graph]:
        """Each id's neighbours over every kind of link, and over those not in time, as
        ``LinkReads.neighbourhood`` answers (ids without links are left out)."""
        graph: Graph = {}
        timeless: Graph = {}
        for memory_id in ids:
            edges, untimed = self._edges(memory_id)
            if edges:
                graph[memory_id] = edges
            if untimed:
                timeless[memory_id] = untimed
        return graph, timeless

    def _edges(self, memory_id: str) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        changed = self.changed.get(memory_id)
        if changed is not None:
            return changed
        start, end, timeless_start, timeless_end = self.runs.get(memory_id, _NO_RUN)
        return (
            self._run(self.targets, self.weights, start, end),
            self._run(self.timeless_targets, self.timeless_weights, timeless_start, timeless_end),
        )

    def _run(
        self, targets: array[int], weights: array[float], start: int, end: int
    ) -> list[tuple[str, float]]:
        names = self.names
        return [(names[targets[i]], weights[i]) for i in range(start, end)]

    def take(self, seq: int, ids: Sequence[str], read: tuple[Graph, Graph]) -> None:
        """Take the neighbourhoods of ``ids`` read again as of change ``seq``."""
        graph, timeless = read
        for memory_id in ids:
            self.changed[memory_id] = (graph.get(memory_id, []), timeless.get(memory_id, []))
        self.seq = seq


class FollowedLinks:
    """``LinkReads`` over the store's links: ``neighbourhood`` from a ``LinkTable`` kept in step by
    the change log once built, from the store before; ``answers`` and ``superseded_by`` from the
    store."""

    def __init__(self, records: SQLiteMemoryStore) -> None:
        self._records = records
        self._table: LinkTable | None = None
        self._lock = threading.Lock()
        self._building = threading.Lock()

    @property
    def ready(self) -> bool:
        """Whether reads come from the table (built, and following the log)."""
        return self._table is not None

    def build(self) -> None:
        """Read every memory's neighbourhood into a new table, in one read of the store with the
        change log's head (a build already running is waited for, not repeated)."""
        with self._building:
            table = self._records.links.every_neighbourhood(LinkTable.read)
            with self._lock:
                self._table = table

    def build_in_background(self) -> threading.Thread:
        """Build the table on a daemon thread; reads go to the store until it is ready."""
        thread = threading.Thread(target=self._build_logged, name="link-table", daemon=True)
        thread.start()
        return thread

    def _build_logged(self) -> None:
        from cognitive_memory.errors import StorageError

        try:
            self.build()
        except StorageError as exc:
            logger.warning("The links were not read into memory (recall reads them from the store): %s", exc)

    def neighbourhood(self, ids: Sequence[str]) -> tuple[Graph, Graph]:
        """Each id's neighbours over every kind of link, and the same without links in time."""
        return self._records.together(lambda: self._neighbourhood(ids))

    def _neighbourhood(self, ids: Sequence[str]) -> tuple[Graph, Graph]:
        with self._lock:
            table = self._table
            if table is None or not self._caught_up(table):
                return self._records.links.neighbourhood(ids)
            return table.neighbourhood(ids)

    def _caught_up(self, table: LinkTable) -> bool:
        """Bring ``table`` up to the change log's head; False when it cannot be (it is dropped and
        built again on a thread, and this read goes to the store)."""
        found = self._records.changes.since(table.seq)
        changed = list(dict.fromkeys(c.memory_id for c in found.changes if c.kind == "links"))
        if found.whole or len(changed) > REBUILD_AFTER:
            why = "the change log no longer reaches back to it" if found.whole else "too much changed"
            logger.info("The links in memory are read again (%s)", why)
            self._table = None
            self.build_in_background()
            return False
        if changed:
            table.take(found.head, changed, self._records.links.neighbourhood(changed))
        else:
            table.seq = found.head
        return True

    def answers(self, ids: Sequence[str]) -> dict[str, str]:
        """For each question turn among ``ids``, the turn that answers it (from the store)."""
        return self._records.links.answers(ids)

    def superseded_by(self, ids: Sequence[str]) -> dict[str, list[str]]:
        """For each of ``ids`` that other memories supersede, their ids (from the store)."""
        return self._records.links.superseded_by(ids)
