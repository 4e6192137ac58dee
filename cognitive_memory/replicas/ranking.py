"""What ranking reads of each memory, held in memory by column and kept in step by the change log.

A recall reads the ranking rows of about a hundred and fifty candidates (``ranking_rows``): in
SQLite, rows of some 1.7 kB each (the 32-bit embedding is 1.5 kB of it) found one by one by id.
Here every memory has a dense slot (``slots``: id -> slot) and its fields sit in columns indexed by
it: numpy arrays for the numbers, small codes for the strings many memories share (loader, project,
kind, tags, speaker, session), the terms of its own text as a tuple of interned strings (each term
kept once, its hash with it, so a candidate's set of terms is made without hashing its words
again), and its exact 32-bit embedding as a row of one float32 matrix. Its text is not kept:
ranking never reads it, only what is returned is read whole.

A memory whose row changed (stored, updated, forgotten, used) is read again from the store inside
the recall's read, as the change log names it (``following.py``), and written over its slot; the
rows handed out hold copies of their embeddings, so a recall running beside the catch-up never
sees one change. A forgotten memory's slot stays empty until the table is next built whole.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from cognitive_memory.core.memory import Vector
from cognitive_memory.core.ranking import RankingRow
from cognitive_memory.core.store import StoreOfRecord
from cognitive_memory.core.store.values import ChangeKind
from cognitive_memory.index.vector_store import VectorFilter
from cognitive_memory.replicas.following import FollowedTable

__all__ = ["FollowedRanking", "RankingTable"]

# The string columns, coded by ``_Names``: where in ``RankingTable.codes`` each sits.
_LOADER, _PROJECT, _KIND, _TAGS, _SPEAKER, _SESSION = range(6)


class _Names:
    """Strings that many memories share, each kept once and coded by a small number (None: 0)."""

    def __init__(self) -> None:
        self.names: list[str | None] = [None]
        self._codes: dict[str | None, int] = {None: 0}
        self._array: np.ndarray | None = None

    def code(self, name: str | None) -> int:
        code = self._codes.get(name)
        if code is None:
            code = self._codes[name] = len(self.names)
            self.names.append(name)
            self._array = None
        return code

    def array(self) -> np.ndarray:
        """The names as an array of objects, indexed by code."""
        if self._array is None:
            self._array = np.array(self.names, dtype=object)
        return self._array


@dataclass
class RankingTable:
    """Every memory's ranking row as of change ``seq``, by column; ``slots`` maps a memory's id to
    its row of each column (``ids`` the reverse, None for a slot left behind); ``used`` the slots
    taken so far out of the columns' room."""

    seq: int
    dimension: int
    slots: dict[str, int]
    ids: list[str | None]
    importance: np.ndarray
    uses: np.ndarray
    last_used: np.ndarray
    timestamp: np.ndarray
    level: np.ndarray
    codes: np.ndarray
    terms: list[tuple[str, ...]]
    vectors: np.ndarray
    names: _Names
    used: int = 0
    # How many memories hold each project (by its code): ``only_in`` without a scan.
    projects: dict[int, int] = field(default_factory=dict)

    @classmethod
    def empty(cls, seq: int, dimension: int, room: int = 1024) -> RankingTable:
        """A table with room for ``room`` memories, as of change ``seq``."""
        room = max(room, 16)
        return cls(
            seq,
            dimension,
            {},
            [],
            np.zeros(room, dtype=np.float64),
            np.zeros(room, dtype=np.int64),
            np.zeros(room, dtype=np.float64),
            np.zeros(room, dtype=np.float64),
            np.zeros(room, dtype=np.int64),
            np.zeros((room, 6), dtype=np.int32),
            [],
            np.zeros((room, dimension), dtype=np.float32),
            _Names(),
        )

    @classmethod
    def read(cls, seq: int, rows: Iterator[RankingRow], dimension: int, room: int = 1024) -> RankingTable:
        """The table of ``rows`` (every memory's), as of change ``seq``."""
        table = cls.empty(seq, dimension, room)
        for row in rows:
            table.put(row)
        return table

    def __len__(self) -> int:
        return len(self.slots)

    def rows(self, ids: Sequence[str]) -> list[RankingRow]:
        """The rows of ``ids`` in the order given, as ``ranking_rows`` reads them from the store
        (unknown ids are skipped); their embeddings copied out, read-only."""
        slots = self.slots
        taken = [memory_id for memory_id in ids if memory_id in slots]
        if not taken:
            return []
        at = np.fromiter((slots[memory_id] for memory_id in taken), dtype=np.intp, count=len(taken))
        names, codes, terms = self.names.array(), self.codes[at].T, self.terms
        columns = (
            taken,
            self.importance[at].tolist(),
            self.uses[at].tolist(),
            self.last_used[at].tolist(),
            self.timestamp[at].tolist(),
            names[codes[_LOADER]].tolist(),
            list(self._copied(at)),
            names[codes[_PROJECT]].tolist(),
            self.level[at].tolist(),
            names[codes[_KIND]].tolist(),
            names[codes[_TAGS]].tolist(),
            names[codes[_SPEAKER]].tolist(),
            [frozenset(terms[slot]) for slot in at.tolist()],
            names[codes[_SESSION]].tolist(),
        )
        return list(map(RankingRow._make, zip(*columns, strict=True)))

    def vectors_of(self, ids: Iterable[str]) -> dict[str, Vector]:
        """The embeddings of ``ids`` (unknown ids are left out), copied out, read-only."""
        taken = [memory_id for memory_id in ids if memory_id in self.slots]
        at = np.fromiter((self.slots[memory_id] for memory_id in taken), dtype=np.intp, count=len(taken))
        return dict(zip(taken, self._copied(at), strict=True))

    def _copied(self, at: np.ndarray) -> np.ndarray:
        """The embeddings of slots ``at``, copied (a later write to the table never reaches a row
        handed out) and read-only, as the store's are."""
        block: np.ndarray = self.vectors[at]
        block.flags.writeable = False
        return block

    def take(self, ids: Sequence[str], rows: Sequence[RankingRow]) -> None:
        """Take ``rows``, read again for ``ids``: an id without a row is gone (forgotten, or no
        longer readable)."""
        for row in rows:
            self.put(row)
        kept = {row.id for row in rows}
        for memory_id in ids:
            if memory_id not in kept:
                self._drop(memory_id)

    def put(self, row: RankingRow) -> None:
        """Keep ``row``, in its memory's slot (a new one for a new memory). A row whose
        embedding is of another size is left out, as the store leaves it out once it records its
        encoder's (ranking could not compare it)."""
        if len(row.embedding) != self.dimension:
            self._drop(row.id)
            return
        slot = self.slots.get(row.id)
        if slot is None:
            slot = self._new_slot(row.id)
        else:
            self._count_project(int(self.codes[slot, _PROJECT]), -1)
        self.vectors[slot] = row.embedding
        self.importance[slot] = row.importance_score
        self.uses[slot] = row.uses
        self.last_used[slot] = row.last_used
        self.timestamp[slot] = row.timestamp
        self.level[slot] = row.hierarchy_level
        code = self.names.code
        self.codes[slot] = (
            code(row.loader_type),
            code(row.project),
            code(row.memory_type),
            code(row.tags_json),
            code(row.speaker),
            code(row.session_id),
        )
        self.terms[slot] = tuple(map(sys.intern, row.terms))
        self._count_project(int(self.codes[slot, _PROJECT]), 1)

    def only_in(self, projects: Sequence[str]) -> bool:
        """True when every memory belongs to one of ``projects`` (as ``Memories.only_in``)."""
        wanted = set(projects)
        names = self.names.names
        return bool(wanted) and all(names[code] in wanted for code in self.projects)

    def _count_project(self, code: int, step: int) -> None:
        held = self.projects.get(code, 0) + step
        if held > 0:
            self.projects[code] = held
        else:
            self.projects.pop(code, None)

    def _new_slot(self, memory_id: str) -> int:
        slot = self.used
        if slot == len(self.importance):
            self._grow(2 * slot)
        self.used += 1
        self.slots[memory_id] = slot
        self.ids.append(memory_id)
        self.terms.append(())
        return slot

    def _drop(self, memory_id: str) -> None:
        slot = self.slots.pop(memory_id, None)
        if slot is not None:
            self._count_project(int(self.codes[slot, _PROJECT]), -1)
            self.ids[slot] = None
            self.terms[slot] = ()

    def _grow(self, room: int) -> None:
        """Make room for ``room`` slots: new, larger columns (rows handed out keep the old ones)."""
        for name in ("importance", "uses", "last_used", "timestamp", "level", "codes", "vectors"):
            old = getattr(self, name)
            new = np.zeros((room, *old.shape[1:]), dtype=old.dtype)
            new[: len(old)] = old
            setattr(self, name, new)

    def bytes_held(self) -> dict[str, int]:
        """What the table holds, in bytes: ``vectors`` (the embeddings), ``columns`` (the number
        and code columns), ``strings`` (the terms and shared strings) and ``ids`` (the id to slot
        map with its strings)."""
        arrays = (self.importance, self.uses, self.last_used, self.timestamp, self.level, self.codes)
        strings = sum(map(sys.getsizeof, self.terms)) + sys.getsizeof(self.terms)
        strings += sum(sys.getsizeof(term) for term in {term for held in self.terms for term in held})
        strings += sum(sys.getsizeof(name) for name in self.names.names if name is not None)
        ids = sys.getsizeof(self.slots) + sys.getsizeof(self.ids)
        ids += sum(sys.getsizeof(memory_id) for memory_id in self.slots)
        return {
            "vectors": int(self.vectors.nbytes),
            "columns": sum(int(column.nbytes) for column in arrays),
            "strings": strings,
            "ids": ids,
        }


class FollowedRanking(FollowedTable[RankingTable]):
    """What ranking reads of each candidate (``ranking_rows``) and the vectors recall reads
    (``vectors``): from a ``RankingTable`` kept in step by the change log once built, from the
    store before and while it cannot follow."""

    kinds: frozenset[ChangeKind] = frozenset({"memory", "words", "uses"})
    # Reading a changed row again costs about what a recall's own rows cost: past a few thousand,
    # a build on a thread is cheaper than one slow recall.
    rebuild_after = 2_000
    name = "ranking table"

    def __init__(self, records: StoreOfRecord, dimension: int) -> None:
        """``dimension``: the size of the encoder's vectors."""
        super().__init__(records)
        self._dimension = dimension

    def _read_whole(self) -> RankingTable:
        memories = self._records.memories
        room = memories.counts().total + 1024
        dimension = self._dimension
        return memories.every_ranking_row(lambda seq, rows: RankingTable.read(seq, rows, dimension, room))

    def _take(self, table: RankingTable, seq: int, changed: Sequence[str]) -> None:
        table.take(changed, self._records.memories.ranking_rows(changed))

    def ranking_rows(self, ids: Sequence[str]) -> list[RankingRow]:
        """The few fields ranking needs, for many candidates at once."""
        from_store = self._records.memories.ranking_rows
        return self._records.together(
            lambda: self._read(lambda table: table.rows(ids), lambda: from_store(ids))
        )

    def vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        """The stored vectors of these ids."""
        from_store = self._records.memories.vectors
        return self._records.together(
            lambda: self._read(lambda table: table.vectors_of(ids), lambda: from_store(ids))
        )

    def only_in(self, projects: Sequence[str]) -> bool:
        """True when every memory belongs to one of ``projects`` (``Memories.only_in``)."""
        from_store = self._records.memories.only_in
        return self._records.together(
            lambda: self._read(lambda table: table.only_in(projects), lambda: from_store(projects))
        )

    def index_filter(
        self, where: VectorFilter | None, *, sessions_in_index: bool = False
    ) -> VectorFilter | None:
        """``where`` as the vector index needs it (``Memories.index_filter``), whether every
        memory is in its projects told by the table."""
        filters = self._records.memories.index_filter
        return filters(where, sessions_in_index=sessions_in_index, only_in=self.only_in)

    def filter_at_hand(
        self, where: VectorFilter | None, *, sessions_in_index: bool = False
    ) -> tuple[VectorFilter | None] | None:
        """``index_filter`` as the table last caught up tells it, without reading the store: the
        filter in a tuple, or None when the table is not built or the filter lists ids (the store
        must be read). Recall checks it against the change log after its search."""
        if self._records.memories.needs_ids(where, sessions_in_index=sessions_in_index):
            return None
        with self._lock:
            table = self._table
            if table is None:
                return None
            filters = self._records.memories.index_filter
            return (filters(where, sessions_in_index=sessions_in_index, only_in=table.only_in),)

    def bytes_held(self) -> dict[str, int]:
        """What the table holds, in bytes (``RankingTable.bytes_held``; empty before it is built)."""
        table = self._table
        return table.bytes_held() if table is not None else {}
