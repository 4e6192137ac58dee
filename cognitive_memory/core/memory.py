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
    "LOADED_KINDS",
    "LOADED_TYPES",
    "HierarchyLevel",
    "MemoryType",
    "SourceKind",
    "Vector",
    "content_key",
    "shown_metadata",
    "split_metadata",
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


class SourceKind(StrEnum):
    """Where a memory came from: stored by hand (a tool, a command, a hook), a section of a
    markdown note, a pattern of a git history, or a lesson of a session. SQLite and the vector
    index hold it as ``loader_type`` (NULL, or absent, for a memory stored by hand)."""

    BY_HAND = "by_hand"
    MARKDOWN = "markdown"
    GIT = "git"
    SESSION_LESSON = "session_lesson"

    @property
    def loader_type(self) -> str | None:
        """The kind as the ``loader_type`` column, the index payload and answers name it."""
        return None if self is SourceKind.BY_HAND else self.value

    @classmethod
    def of(cls, loader_type: str | None) -> SourceKind:
        """The kind a ``loader_type`` names (None: stored by hand)."""
        return cls.BY_HAND if loader_type is None else cls(loader_type)

    @property
    def is_loaded(self) -> bool:
        """Kept in step with a source by a loader: the source, not an edit, changes it."""
        return self in LOADED_KINDS


# Kept in step with a file or a repository: never pruned, forgotten or changed by an import.
LOADED_KINDS = (SourceKind.MARKDOWN, SourceKind.GIT)
# Their ``loader_type`` values, as the store of record holds them.
LOADED_TYPES = tuple(kind.value for kind in LOADED_KINDS)
# The keys under which answers, exports and versions show the fields a record holds as columns
# (the export format of the releases before them carried them in ``metadata``).
LOADER_TYPE_KEY, SPEAKER_KEY, ORIGIN_KEY = "loader_type", "speaker", "source_path"
_NAMED_KINDS = {kind.value: kind for kind in SourceKind if kind is not SourceKind.BY_HAND}


@dataclass(frozen=True, slots=True)
class CognitiveMemory:
    """One stored memory with its bookkeeping.

    ``timestamp`` is when it was stored, ``source_date`` when the thing it describes happened
    (a commit, a document date) and ``modified_date`` when its source last changed.
    ``cognitive_embedding`` is the normalized 384-d vector. ``source`` says where it came from,
    ``speaker`` who said it (a turn of a conversation), ``origin`` the file it was loaded from;
    ``metadata`` is the rest, the caller's and the loader's own details. ``session_id`` names the
    server session (or loader run) that stored it: memories stored in sequence in one session
    become neighbours in time. ``project`` scopes it (``global`` memories are seen from every
    project). ``key`` is the caller's name for it, unique among the live memories of its project
    (``core.validation.check_key``): storing under a key held updates the memory holding it.
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
    metadata: Mapping[str, Any] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    cognitive_embedding: Vector | None = field(default=None, compare=False, repr=False)
    session_id: str | None = None
    project: str = DEFAULT_PROJECT
    source: SourceKind = SourceKind.BY_HAND
    speaker: str | None = None
    origin: str | None = None
    key: str | None = None

    @property
    def shown_metadata(self) -> dict[str, Any]:
        """``metadata`` as answers and exports show it: with the source kind, speaker and origin
        under the keys ``loader_type``, ``speaker`` and ``source_path``."""
        return shown_metadata(self.metadata, self.source.loader_type, self.speaker, self.origin)

    @property
    def revision(self) -> str:
        """A digest of what an edit can change (text, tags, importance, level, type, metadata) and
        of the project: equal digests, equal memories for an editor. An edit made from a read
        carries it so a change in between is refused rather than undone (``EditConflictError``).
        The metadata counts as shown, so a revision read before the fields became columns holds."""
        state = [
            self.content,
            list(self.tags),
            self.importance_score,
            int(self.hierarchy_level),
            str(self.memory_type),
            self.shown_metadata,
            self.project,
        ]
        text = json.dumps(state, sort_keys=True, default=str)
        return hashlib.blake2b(text.encode("ascii"), digest_size=16).hexdigest()


def shown_metadata(
    metadata: Mapping[str, Any], loader_type: str | None, speaker: str | None, origin: str | None
) -> dict[str, Any]:
    """The caller's ``metadata`` with a record's columns under their keys, in the order the loaders
    and ``store_memory`` wrote them: ``loader_type`` and ``source_path`` first, ``speaker`` last."""
    shown: dict[str, Any] = {}
    if loader_type is not None:
        shown[LOADER_TYPE_KEY] = loader_type
    if origin is not None:
        shown[ORIGIN_KEY] = origin
    shown.update(metadata)
    if speaker is not None:
        shown[SPEAKER_KEY] = speaker
    return shown


def split_metadata(
    metadata: Mapping[str, Any],
) -> tuple[SourceKind, str | None, str | None, dict[str, Any]]:
    """The source kind, speaker and origin a shown ``metadata`` carries (an export line, a trash
    entry of an older release), and the rest: a key whose value is not one of a record's
    (an unknown loader type, a speaker that is not text) stays in the rest."""
    rest = dict(metadata)
    kind = _NAMED_KINDS.get(rest[LOADER_TYPE_KEY]) if isinstance(rest.get(LOADER_TYPE_KEY), str) else None
    if kind is not None:
        del rest[LOADER_TYPE_KEY]
    speaker = rest.pop(SPEAKER_KEY) if isinstance(rest.get(SPEAKER_KEY), str) else None
    origin = rest.pop(ORIGIN_KEY) if isinstance(rest.get(ORIGIN_KEY), str) else None
    return kind or SourceKind.BY_HAND, speaker, origin, rest


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
