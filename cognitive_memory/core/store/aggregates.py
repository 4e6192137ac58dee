"""The store of record's other aggregates: loaded sources, the trash, the words' documents and
their build, the vector writes queued for the index, the change log, damaged rows, the store's
properties, and consolidation's merge of near duplicates."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import datetime
from typing import Protocol

from cognitive_memory.core.pruning import PruneCandidate, PruneCriteria
from cognitive_memory.core.store.values import (
    Changes,
    ChunkRow,
    DamagedRow,
    MergedGroup,
    ProjectRows,
    Restored,
    SourceRecord,
    SourceWrite,
    TrashRow,
    WordDocument,
    WordsProgress,
)

__all__ = [
    "ChangeRecords",
    "Confirm",
    "DamagedRecords",
    "DuplicateRecords",
    "IndexedWordRecords",
    "OutboxRecords",
    "PropertyRecords",
    "SourceRecords",
    "TrashRecords",
    "WordDocumentRecords",
]

# Checks a prune's confirm token against what it would take (secret, candidates, now, the digests
# of the tokens already used); raises to refuse them, else returns the token's digest.
Confirm = Callable[[str, Sequence[PruneCandidate], float, Collection[str]], str]


class SourceRecords(Protocol):
    """The loaded sources (files, git histories) and the chunks of each that memories hold."""

    def write(self, writes: Sequence[SourceWrite]) -> None:
        """Apply loader syncs in one transaction: a reader sees each source before or after, never
        half-replaced."""
        ...

    def forget(self, keys: Sequence[str]) -> list[str]:
        """Forget these sources and delete their memories; returns the ids deleted."""
        ...

    def orphans(self) -> list[str]:
        """Ids of memories marked as loaded that no source's chunks hold (the doctor's check)."""
        ...

    def chunks(self, key: str) -> list[ChunkRow]:
        """The chunks a source holds, in order."""
        ...

    def under(self, loader_type: str, prefix: str = "") -> list[SourceRecord]:
        """Loaded sources of ``loader_type`` whose key starts with ``prefix``."""
        ...

    def digests(self, key: str) -> list[str]:
        """The per-item digests a loader keeps for a source (one per commit, say), oldest first."""
        ...

    def save_digests(self, key: str, items: Sequence[tuple[str, str]], *, replace: bool = False) -> None:
        """Append ``(item_key, data)`` digests to a source's, or replace them all."""
        ...


class TrashRecords(Protocol):
    """The trash: forgotten memories kept whole (links and versions too) until purged."""

    def move(self, ids: Sequence[str], reason: str, session_id: str | None) -> list[str]:
        """Move memories to the trash; returns the ids that existed."""
        ...

    def restore(self, ids: Sequence[str], entries: Sequence[int] = ()) -> Restored:
        """Put trashed memories (or the given entries) back."""
        ...

    def entries(self, limit: int, projects: Sequence[str] = ()) -> tuple[list[TrashRow], int]:
        """The latest trashed first (of ``projects`` only, if given), at most ``limit``, and how
        many entries of those the trash holds."""
        ...

    def memory_count(self, projects: Sequence[str] = ()) -> int:
        """Of how many memories the trash holds entries (of ``projects`` only, if given)."""
        ...

    def find(self, ids: Sequence[str]) -> list[TrashRow]:
        """The trash entries of these ids."""
        ...

    def starting_with(self, prefix: str, limit: int = 2) -> list[str]:
        """Up to ``limit`` distinct ids of trashed memories that start with ``prefix``."""
        ...

    def purge(self, before: float | None) -> int:
        """Delete for good what was trashed before ``before`` (all when None); returns how many."""
        ...

    def prune_plan(
        self, criteria: PruneCriteria, now: float, spared_loaders: Sequence[str], limit: int
    ) -> tuple[list[PruneCandidate], int, str]:
        """What a prune would take, how many match in all, and the secret its token is made with."""
        ...

    def prune(
        self,
        criteria: PruneCriteria,
        spared_loaders: Sequence[str],
        limit: int,
        confirm: Confirm,
        session: str | None,
    ) -> list[str]:
        """Select again, let ``confirm`` refuse the token, record it as used and move the set to
        the trash, all in one transaction; returns the ids moved."""
        ...


class WordDocumentRecords(Protocol):
    """What the word vectors of the index are weighted from."""

    def of(self, ids: Sequence[str]) -> dict[str, WordDocument]:
        """Each memory's document: its own text and its neighbours' in time."""
        ...

    def weighting_average(self) -> float:
        """The average document length the index's word vectors are weighted with."""
        ...

    def current_average(self) -> float:
        """The store's average document length now."""
        ...

    def drifted(self) -> bool:
        """Whether the current average drifted too far from the weighting one."""
        ...

    def reweigh(self, *, in_background: bool = False) -> float:
        """Take the current average as the weighting one; returns it (``in_background``: a pass
        weighing every memory's words again begins with it)."""
        ...


class IndexedWordRecords(Protocol):
    """Whether the vector index holds every memory's words, and how far their build has come."""

    def complete(self) -> bool:
        """True once the index holds every memory's words."""
        ...

    def mark_complete(self) -> None:
        """Record that it does (a rebuild of the index wrote them all)."""
        ...

    def next_batch(self, limit: int) -> list[tuple[int, str]]:
        """The (place, id) of the next ``limit`` memories the build has not reached."""
        ...

    def advance(self, rowid: int) -> None:
        """Move the build's watermark to ``rowid``."""
        ...

    def progress(self) -> WordsProgress | None:
        """(memories whose words are built, memories), or None once all are."""
        ...

    def reweigh_batch(self, limit: int) -> tuple[str, list[tuple[int, str]]] | None:
        """Where the pass weighing the words again stands, and the next ``limit`` memories past it;
        None when no pass is under way."""
        ...

    def advance_reweigh(self, read: str, rowid: int) -> bool:
        """Move the pass's watermark from ``read`` to ``rowid``; False when a new pass started."""
        ...

    def end_reweigh(self, read: str) -> None:
        """End the pass that reached the last memory from ``read`` (unless a new one started)."""
        ...

    def drop_reweigh(self) -> None:
        """Forget a pass under way."""
        ...

    def reweigh_progress(self) -> WordsProgress | None:
        """(memories weighed again, memories) while a pass runs, else None."""
        ...


class OutboxRecords(Protocol):
    """The vector writes committed with the memories and not yet confirmed by the index."""

    def pending(self) -> list[tuple[str, str]]:
        """(memory id, operation) of the writes not yet confirmed."""
        ...

    def to_be_indexed(self) -> int:
        """How many memories the vector index should hold now."""
        ...

    def clear(self, ids: Iterable[str], queued_before: float | None = None) -> None:
        """Drop the queued writes of these memories (queued by ``queued_before`` only, if given)."""
        ...


class ChangeRecords(Protocol):
    """The change log: which memories changed, in the order their writes committed."""

    def head(self) -> int:
        """The seq of the last change written (0 before any)."""
        ...

    def since(self, seq: int, limit: int | None = None) -> Changes:
        """The changes after ``seq`` (the first ``limit`` of them, if given)."""
        ...

    def ours(self, seq: int) -> bool:
        """Whether change ``seq`` was written through this store (this process's own write)."""
        ...

    def trim(self, keep: int = ...) -> int:
        """Drop all but the newest ``keep`` changes now and then; how many went."""
        ...


class DamagedRecords(Protocol):
    """Memories whose row cannot be read or indexed (``doctor --repair`` sets them aside)."""

    def find(self, dimension: int | None = None) -> list[DamagedRow]:
        """The damaged memories, for vectors of ``dimension`` numbers (the recorded encoder's)."""
        ...

    def set_aside(self, rows: Sequence[DamagedRow]) -> list[str]:
        """Move damaged memories out of the store's way, kept; returns their ids."""
        ...

    def set_aside_count(self) -> int:
        """How many memories were set aside so far."""
        ...


class PropertyRecords(Protocol):
    """The store's own named values (the encoder it was built with, ...) and its last activity."""

    def get(self, key: str) -> str | None:
        """The value of ``key``, if set."""
        ...

    def set(self, key: str, value: str) -> None:
        """Set ``key`` to ``value``."""
        ...

    def activity(self) -> dict[str, datetime]:
        """When the store last stored, recalled, ... (by name)."""
        ...


class DuplicateRecords(Protocol):
    """Consolidation's merge of near duplicates."""

    def projects(self, project: str | None, spared: Sequence[str]) -> list[str]:
        """The projects holding two or more memories that may be merged (only ``project`` if given;
        loaded memories of the ``spared`` loader types never)."""
        ...

    def rows(self, project: str, spared: Sequence[str]) -> ProjectRows:
        """The memories of ``project`` that may be merged, with their vectors."""
        ...

    def merge(self, survivor: str, others: Sequence[str], session_id: str | None) -> MergedGroup | None:
        """Merge ``others`` into ``survivor`` in one transaction (None: nothing left to merge)."""
        ...

    def record(self, summary: dict[str, float | int]) -> None:
        """Record the summary of the last consolidation."""
        ...
