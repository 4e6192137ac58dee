"""The store of record's memories, their versions, links and words, as the system and the use
cases use them: each protocol widens recall's slice of the same aggregate (``reads.py``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, TypeVar

from cognitive_memory.core.memory import CognitiveMemory
from cognitive_memory.core.ranking import RankingRow
from cognitive_memory.core.store.reads import LinkReads, MemoryReads, WordReads
from cognitive_memory.core.store.values import (
    ImportWrite,
    LinkRow,
    LinkWrite,
    MemoryCounts,
    MemoryPage,
    Neighbourhood,
    NeighbourRow,
    Overview,
    TextMatch,
    VersionRow,
)
from cognitive_memory.core.uses import Use
from cognitive_memory.core.vector_filter import VectorFilter

__all__ = ["LinkRecords", "MemoryRecords", "VersionRecords", "WordRecords"]

T = TypeVar("T")


class MemoryRecords(MemoryReads, Protocol):
    """Every memory: written, read, counted, paged and keyed. Each write is one transaction that
    also queues the memory's vector write (the outbox) and appends to the change log."""

    def add(self, memories: Sequence[CognitiveMemory]) -> None:
        """Insert new memories (their words, links in time and queued vector writes with them)."""
        ...

    def delete(self, ids: Sequence[str]) -> list[str]:
        """Delete memories for good (not to the trash); returns the ids that existed."""
        ...

    def rewrite(self, memory: CognitiveMemory, previous: CognitiveMemory, session_id: str | None) -> int:
        """Replace ``previous`` by ``memory`` (same id), keeping ``previous`` as a version; returns
        that version's number. Refused (``EditConflictError``) if the stored memory is no longer
        ``previous``: compare and set in one transaction."""
        ...

    def write_import(
        self, write: ImportWrite, session_id: str | None, *, dry_run: bool = False
    ) -> list[LinkWrite]:
        """Write an import in one transaction (a dry run writes nothing); what each link did."""
        ...

    def starting_with(self, prefix: str, limit: int = 2) -> list[str]:
        """Up to ``limit`` ids of memories that start with ``prefix`` (lower-case hex and '-')."""
        ...

    def unique_prefix_lengths(self, ids: Sequence[str]) -> dict[str, int]:
        """For each id, how many of its first characters no other memory's id starts with."""
        ...

    def find_same_text(self, text: str, project: str) -> CognitiveMemory | None:
        """A memory of ``project`` whose text equals ``text`` up to whitespace and case."""
        ...

    def keyed(self, keys: Sequence[str], projects: Sequence[str]) -> list[CognitiveMemory]:
        """The memories of ``projects`` holding any of ``keys``."""
        ...

    def change_key(self, memory_id: str, key: str | None) -> str | None:
        """Give a memory ``key`` in place of its own (None: no key); returns the id of the other
        memory of its project that holds ``key`` (and changes nothing then), else None."""
        ...

    def set_key(self, memory_id: str, key: str) -> bool:
        """Give a memory without a key ``key``; False when it has one, or another memory of its
        project holds ``key``."""
        ...

    def batches(self, batch_size: int = 500) -> Iterator[list[CognitiveMemory]]:
        """Every memory, in batches of ``batch_size`` in the order they were stored."""
        ...

    def browse(
        self,
        where: VectorFilter,
        order_by: str,
        limit: int,
        cursor: str | None = None,
        text: TextMatch | None = None,
    ) -> MemoryPage:
        """A page of the memories matching ``where`` (and ``text``), highest ``order_by`` first,
        starting after the page whose ``next_cursor`` ``cursor`` is (refused, ``invalid_cursor``,
        unless this store made it for ``order_by``: ``cursors.py``)."""
        ...

    def overview(self, where: VectorFilter, text: TextMatch | None, size: int) -> Overview:
        """The tags in use and the sessions of the memories matching ``where`` (and ``text``), at
        most ``size`` of each named."""
        ...

    def record_uses(self, uses: Sequence[Use]) -> None:
        """Count each use's memories as accessed and strengthen its co-recall links."""
        ...

    def counts(self) -> MemoryCounts:
        """How many memories there are, by level, type and project."""
        ...

    def every_ranking_row(self, take: Callable[[int, Iterator[RankingRow]], T]) -> T:
        """What ``take`` makes of the change log's head and every memory's ranking row (in the
        order they were stored, read as it takes them), both in one read that recalls do not
        wait for (the ranking replica's build)."""
        ...

    def index_filter(
        self,
        where: VectorFilter | None,
        *,
        sessions_in_index: bool = False,
        only_in: Callable[[Sequence[str]], bool] | None = None,
    ) -> VectorFilter | None:
        """``FilterReads.index_filter``, whether every memory is in the filter's projects told by
        ``only_in`` when given (a replica kept in memory), else by the store."""
        ...

    def needs_ids(self, where: VectorFilter | None, *, sessions_in_index: bool = False) -> bool:
        """Whether ``index_filter`` lists the ids of the memories ``where`` matches (a read of
        the store that nothing kept in memory answers)."""
        ...

    def only_in(self, projects: Sequence[str]) -> bool:
        """True when every memory belongs to one of ``projects``."""
        ...


class VersionRecords(Protocol):
    """The earlier versions of memories (``history``)."""

    def of(self, ids: Sequence[str]) -> dict[str, list[VersionRow]]:
        """Each id's earlier versions, oldest first (ids without any are left out)."""
        ...


class LinkRecords(LinkReads, Protocol):
    """The user's typed links between memories."""

    def link(
        self,
        link: tuple[str, str, str],
        note: str | None,
        session_id: str | None,
        weight: float | None = None,
    ) -> LinkWrite:
        """Add the link ``(from_id, to_id, relation)`` of ``weight``, unless an id is missing or it
        would close a supersedes cycle."""
        ...

    def unlink(self, from_id: str, to_id: str, relation: str | None = None) -> list[str]:
        """Remove the links from ``from_id`` to ``to_id`` (of ``relation`` only, if given); returns
        the relations removed."""
        ...

    def outgoing(self, ids: Sequence[str]) -> dict[str, list[LinkRow]]:
        """The user links starting at each of ``ids``."""
        ...

    def every_neighbourhood(self, take: Callable[[int, Iterator[NeighbourRow]], T]) -> T:
        """What ``take`` makes of the change log's head and every memory's ``neighbourhood`` (by
        memory, then neighbour id, read as it takes them), both in one read that recalls do not
        wait for (the link replica's build)."""
        ...

    def related(self, start: str, depth: int, relations: Sequence[str], limit: int) -> Neighbourhood:
        """The memories linked to ``start`` up to ``depth`` hops (over ``relations`` only, if
        given), nearest first, at most ``limit``."""
        ...


class WordRecords(WordReads, Protocol):
    """The memories' words, as listing searches them besides recall."""

    def text_match(self, text: str) -> TextMatch | None:
        """What a listed memory's own text must hold to match ``text`` (None: it has no words)."""
        ...

    def held(self, terms: Sequence[str]) -> dict[str, int]:
        """How many memories hold each of ``terms`` in their own text (the vocabulary's counts,
        which decide whether a query's word is corrected; 0 for a term none holds)."""
        ...
