"""What the use cases read of the store of record besides recall: memories by id or key without
counting a use, their versions, pages and overviews of a listing, ids by their first characters,
the trash's entries and the store's own properties. Built by ``CognitiveSystem`` over its store
(``system.browsing``), so the use-case layer never walks the store's aggregates itself."""

from __future__ import annotations

from collections.abc import Sequence

from cognitive_memory.core.memory import CognitiveMemory
from cognitive_memory.core.store import StoreOfRecord
from cognitive_memory.core.store.values import MemoryPage, Overview, TextMatch, TrashRow, VersionRow
from cognitive_memory.core.vector_filter import VectorFilter

__all__ = ["Browsing"]


class Browsing:
    """Reads of the store of record for listing, reading and resolving memories; none counts as a
    use of a memory (``CognitiveSystem.open`` does)."""

    def __init__(self, records: StoreOfRecord) -> None:
        self._records = records

    def memories(self, ids: Sequence[str]) -> list[CognitiveMemory]:
        """The memories with these ids, in the order given (unknown ids are skipped)."""
        return self._records.memories.get(ids)

    def keyed(self, keys: Sequence[str], projects: Sequence[str]) -> list[CognitiveMemory]:
        """The memories of ``projects`` holding any of ``keys``."""
        return self._records.memories.keyed(keys, projects)

    def versions(self, ids: Sequence[str]) -> dict[str, list[VersionRow]]:
        """Each id's earlier versions, oldest first (ids without any are left out)."""
        return self._records.history.of(ids)

    def page(
        self, where: VectorFilter, order_by: str, limit: int, cursor: str | None, text: TextMatch | None
    ) -> MemoryPage:
        """A page of the memories matching ``where`` (and ``text``), highest ``order_by`` first,
        starting after the page that returned ``cursor`` (opaque: the store reads it)."""
        return self._records.memories.browse(where, order_by, limit, cursor, text)

    def text_match(self, text: str) -> TextMatch | None:
        """What a listed memory's own text must hold to match ``text`` (None: it has no words)."""
        return self._records.words.text_match(text)

    def overview(self, where: VectorFilter, text: TextMatch | None, size: int) -> Overview:
        """The tags and sessions of the memories matching ``where`` (and ``text``), at most
        ``size`` of each named."""
        return self._records.memories.overview(where, text, size)

    def ids_starting_with(self, prefix: str, limit: int = 2) -> list[str]:
        """Up to ``limit`` ids of stored memories that start with ``prefix``."""
        return self._records.memories.starting_with(prefix, limit)

    def trashed_ids_starting_with(self, prefix: str, limit: int = 2) -> list[str]:
        """Up to ``limit`` distinct ids of trashed memories that start with ``prefix``."""
        return self._records.trash.starting_with(prefix, limit)

    def unique_prefix_lengths(self, ids: Sequence[str]) -> dict[str, int]:
        """For each id, how many of its first characters no other memory's id starts with."""
        return self._records.memories.unique_prefix_lengths(ids)

    def in_trash(self, ids: Sequence[str]) -> list[TrashRow]:
        """The trash entries of these ids."""
        return self._records.trash.find(ids)

    def trash_entries(self, limit: int, projects: Sequence[str] = ()) -> tuple[list[TrashRow], int]:
        """The latest trash entries first (of ``projects`` only, if given), at most ``limit``, and
        how many entries of those the trash holds."""
        return self._records.trash.entries(limit, projects)

    def trashed_memory_count(self, projects: Sequence[str] = ()) -> int:
        """Of how many memories the trash holds entries (of ``projects`` only, if given)."""
        return self._records.trash.memory_count(projects)

    def property(self, key: str) -> str | None:
        """The store's own value of ``key`` (the encoder it was built with, ...), if set."""
        return self._records.properties.get(key)
