"""What a loader hands the system: a source (a file, a repository) cut into chunks.

A loader never writes memories itself. It describes the current content of a source as
``SourceChunk`` values and asks ``CognitiveSystem.sync_sources`` to make the store match: chunks
whose text is unchanged keep their memory (and its access history), changed chunks are updated in
place, new ones are added and vanished ones removed, all in one transaction per call.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cognitive_memory.core.memory import DEFAULT_PROJECT, HierarchyLevel, MemoryType

__all__ = ["SourceChunk", "SourceUpdate", "SyncCounts", "content_hash"]


def content_hash(text: str) -> str:
    """The hash that decides whether a chunk must be embedded again."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class SourceChunk:
    """One memory-to-be of a source. ``key`` is stable across loads (a section path, a file pair);
    ``parent`` names the key of the enclosing chunk; ``links`` are keys of other sources it refers to;
    ``origin`` is the file it was read from (a markdown note)."""

    key: str
    content: str
    hierarchy_level: HierarchyLevel
    memory_type: MemoryType
    metadata: Mapping[str, Any] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    importance_score: float = 0.5
    source_date: datetime | None = None
    parent: str | None = None
    links: tuple[str, ...] = ()
    origin: str | None = None


@dataclass(frozen=True, slots=True)
class SourceUpdate:
    """The whole current content of one source. ``fingerprint`` identifies the source's raw
    content (a file hash, a commit): loaders skip a source whose fingerprint is unchanged.
    ``state`` is loader bookkeeping kept with the source (for example the last commit read).
    ``project`` is the project its memories belong to."""

    key: str
    loader_type: str
    fingerprint: str
    chunks: tuple[SourceChunk, ...]
    state: Mapping[str, Any] = field(default_factory=dict)
    project: str = DEFAULT_PROJECT


@dataclass(frozen=True, slots=True)
class SyncCounts:
    """What one sync did to a source's memories."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0

    def __add__(self, other: SyncCounts) -> SyncCounts:
        return SyncCounts(
            self.added + other.added,
            self.updated + other.updated,
            self.removed + other.removed,
            self.unchanged + other.unchanged,
        )

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)
