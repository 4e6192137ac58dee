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

from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from cognitive_memory.core.links import Graph
from cognitive_memory.core.store.values import ChangeKind, NeighbourRow
from cognitive_memory.replicas.following import FollowedTable

__all__ = ["FollowedLinks", "LinkTable"]

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


class FollowedLinks(FollowedTable[LinkTable]):
    """``LinkReads`` over the store's links: ``neighbourhood`` from a ``LinkTable`` kept in step by
    the change log once built, from the store before; ``answers`` and ``superseded_by`` from the
    store."""

    kinds: frozenset[ChangeKind] = frozenset({"links"})
    name = "link table"

    def _read_whole(self) -> LinkTable:
        return self._records.links.every_neighbourhood(LinkTable.read)

    def _take(self, table: LinkTable, seq: int, changed: Sequence[str]) -> None:
        table.take(seq, changed, self._records.links.neighbourhood(changed))

    def neighbourhood(self, ids: Sequence[str]) -> tuple[Graph, Graph]:
        """Each id's neighbours over every kind of link, and the same without links in time."""
        from_store = self._records.links.neighbourhood
        return self._records.together(
            lambda: self._read(lambda table: table.neighbourhood(ids), lambda: from_store(ids))
        )

    def answers(self, ids: Sequence[str]) -> dict[str, str]:
        """For each question turn among ``ids``, the turn that answers it (from the store)."""
        return self._records.links.answers(ids)

    def superseded_by(self, ids: Sequence[str]) -> dict[str, list[str]]:
        """For each of ``ids`` that other memories supersede, their ids (from the store)."""
        return self._records.links.superseded_by(ids)
