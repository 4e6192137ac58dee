"""What loaders need of the memory: the narrow interface they reach it through."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Protocol

from cognitive_memory.core.sources import SourceUpdate, SyncCounts
from cognitive_memory.encoding.base import Encoder
from cognitive_memory.storage.sources import ChunkRow, SourceRecord

__all__ = ["LockedStore", "SourceStore"]


class LockedStore(Protocol):
    """The store of record as the loaders' lock needs it (``StoreOfRecord``'s ``where`` and
    ``exclusive``)."""

    @property
    def where(self) -> str: ...

    def exclusive(self, name: str, waiting: Callable[[str], None]) -> AbstractContextManager[None]: ...


class SourceStore(Protocol):
    """Loaded sources and their chunks; ``sync.LoadedSources`` is the implementation."""

    @property
    def encoder(self) -> Encoder: ...

    @property
    def records(self) -> LockedStore: ...

    def sources(self, loader_type: str, prefix: str = "") -> list[SourceRecord]:
        """Loaded sources of ``loader_type`` whose key starts with ``prefix``."""
        ...

    def source_chunks(self, key: str) -> list[ChunkRow]: ...

    def source_digests(self, key: str) -> list[str]: ...

    def save_source_digests(
        self, key: str, items: Sequence[tuple[str, str]], *, replace: bool = False
    ) -> None: ...

    def sync_sources(self, updates: Sequence[SourceUpdate]) -> list[SyncCounts]:
        """Make the store hold exactly the given chunks of each source."""
        ...

    def forget_sources(self, keys: Sequence[str]) -> int: ...

    def build_index(self) -> bool:
        """After a bulk write: build the approximate vector index if enough vectors lack it."""
        ...
