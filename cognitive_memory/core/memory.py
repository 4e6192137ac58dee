"""The memory records: what is stored, and what recall hands back."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import IntEnum, StrEnum
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "DEFAULT_PROJECT",
    "GLOBAL_PROJECT",
    "BridgeMemory",
    "CognitiveMemory",
    "HierarchyLevel",
    "MemoryType",
    "Vector",
    "content_key",
]

# Memories belong to a project; recall searches the current one and the memories stored as global.
DEFAULT_PROJECT = "default"
GLOBAL_PROJECT = "global"

Vector = npt.NDArray[np.float32]


class HierarchyLevel(IntEnum):
    """L0 concepts (principles, patterns), L1 contexts (situations, domain knowledge),
    L2 episodes (specific events)."""

    CONCEPT = 0
    CONTEXT = 1
    EPISODE = 2


class MemoryType(StrEnum):
    """Episodic memories record what happened; semantic memories record what is known."""

    EPISODIC = "episodic"
    SEMANTIC = "semantic"


@dataclass(frozen=True, slots=True)
class CognitiveMemory:
    """One stored memory with its bookkeeping.

    ``timestamp`` is when it was stored, ``source_date`` when the thing it describes happened
    (a commit, a document date) and ``modified_date`` when its source last changed.
    ``cognitive_embedding`` is the normalized 384-d vector; ``dimensions`` holds named feature
    scores beside it (empty until a dimension extractor is configured). ``session_id`` names the
    server session (or loader run) that stored it: memories stored in sequence in one session
    become neighbours in time. ``project`` scopes it (``global`` memories are seen from every
    project).
    """

    id: str
    content: str
    hierarchy_level: HierarchyLevel
    memory_type: MemoryType
    created_date: datetime
    timestamp: datetime
    modified_date: datetime | None = None
    source_date: datetime | None = None
    last_accessed: datetime | None = None
    access_count: int = 0
    importance_score: float = 0.5
    strength: float = 1.0
    metadata: Mapping[str, Any] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    cognitive_embedding: Vector | None = field(default=None, compare=False, repr=False)
    dimensions: Mapping[str, float] = field(default_factory=dict)
    session_id: str | None = None
    project: str = DEFAULT_PROJECT

    @property
    def loader_type(self) -> str | None:
        """Where the memory came from: None (stored by hand), markdown, git, session_lesson."""
        value = self.metadata.get("loader_type")
        return str(value) if value is not None else None

    @property
    def revision(self) -> str:
        """A digest of what an edit can change (text, tags, importance, level, type, metadata) and
        of the project: equal digests, equal memories for an editor. An edit made from a read
        carries it so a change in between is refused rather than undone (``EditConflictError``)."""
        state = [
            self.content,
            list(self.tags),
            self.importance_score,
            int(self.hierarchy_level),
            str(self.memory_type),
            dict(self.metadata),
            self.project,
        ]
        text = json.dumps(state, sort_keys=True, default=str)
        return hashlib.blake2b(text.encode("ascii"), digest_size=16).hexdigest()


def content_key(text: str) -> str:
    """The identity of a text for duplicate detection: its words, case-folded, hashed."""
    folded = " ".join(text.split()).casefold()
    return hashlib.blake2b(folded.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class BridgeMemory:
    """A memory far from the query yet close to what the query activated."""

    memory: CognitiveMemory
    novelty_score: float
    connection_potential: float
    bridge_score: float
    explanation: str
    connected_to: str | None = None
