"""The values the store of record takes and gives (``store.py``'s protocols name them): plain
frozen records, whatever the store behind them (``storage/`` holds the SQLite one)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, NamedTuple

import numpy as np

from cognitive_memory.core.consolidation import DuplicateCandidate
from cognitive_memory.core.links import DEFAULT_WEIGHT
from cognitive_memory.core.memory import CognitiveMemory

__all__ = [
    "TableRows",
    "Change",
    "ChangeKind",
    "Changes",
    "ChunkRow",
    "DamagedRow",
    "Direction",
    "ImportWrite",
    "LinkRow",
    "LinkWrite",
    "MemoryCounts",
    "MemoryPage",
    "MergedGroup",
    "Neighbour",
    "NeighbourRow",
    "Neighbourhood",
    "Overview",
    "ProjectRows",
    "Restored",
    "SessionSpan",
    "SkippedLink",
    "SourceRecord",
    "SourceWrite",
    "TagCount",
    "TextMatch",
    "TrashRow",
    "VersionRow",
    "WordDocument",
    "WordsProgress",
]


@dataclass(frozen=True, slots=True)
class TextMatch:
    """Words a listed memory's own text must hold, as FTS5 expressions over the lexical index:
    ``exact`` the words as typed, ``loose`` with their corrections too (None: no word has any)."""

    exact: str
    loose: str | None = None


@dataclass(frozen=True, slots=True)
class MemoryPage:
    """A page of memories, how many match in all, and the opaque cursor of the next page (None:
    the last), which only the store that made it reads (``cursors.py``)."""

    memories: list[CognitiveMemory]
    total: int
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class VersionRow:
    """One earlier version of a memory; ``replaced_at`` is when an update replaced it (epoch s)."""

    memory_id: str
    version: int
    content: str
    hierarchy_level: int
    memory_type: str
    importance_score: float
    tags: tuple[str, ...]
    metadata: dict[str, Any]
    project: str
    replaced_at: float
    replaced_by_session: str | None


# A memory, one memory it is linked to, the strongest weight of their links, and the strongest of
# those not in time (None when they are linked only in time): ``LinkRecords.every_neighbourhood``.
NeighbourRow = tuple[str, str, float, float | None]

ChangeKind = Literal["memory", "links", "words", "uses"]


class Change(NamedTuple):
    """One write: ``kind`` says what of the memory changed (its row, added or removed included;
    its links; its words; only its uses: access count and last use)."""

    seq: int
    memory_id: str
    kind: ChangeKind


class Changes(NamedTuple):
    """What changed after a reader's last ``seq``: the changes, oldest first, and ``head``, the
    seq to ask from next. ``whole``: the changes are not all there is, so the reader must read
    the store whole: rows it had not read were trimmed away, or the log ends before its ``seq``
    (the database was put back from a backup)."""

    changes: Sequence[Change]
    head: int
    whole: bool


@dataclass(frozen=True, slots=True)
class ProjectRows:
    """The memories of one project that consolidation may merge, with their vectors (one row each)."""

    project: str
    candidates: list[DuplicateCandidate]
    contents: list[str]
    vectors: np.ndarray


@dataclass(frozen=True, slots=True)
class MergedGroup:
    """What one merge did: the survivor, the ids moved to the trash, the version number its
    previous state was kept as, and how many user links were pointed at it."""

    survivor: str
    trashed: list[str]
    version: int
    links: int


@dataclass(frozen=True, slots=True)
class DamagedRow:
    """A memory whose row cannot be read or indexed, and what is wrong with it."""

    id: str
    problem: str


@dataclass(frozen=True, slots=True)
class MemoryCounts:
    """How many memories there are, by level, by type, and how many are session lessons."""

    total: int
    by_level: dict[int, int]
    by_type: dict[str, int]
    session_lessons: int
    by_project: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TagCount:
    """A tag and how many of the memories hold it."""

    tag: str
    memories: int


@dataclass(frozen=True, slots=True)
class SessionSpan:
    """A session, how many of the memories it stored, and its first and last (epoch s)."""

    session: str
    memories: int
    first: float
    last: float


@dataclass(frozen=True, slots=True)
class Overview:
    """The most used tags (most first), how many other tags there are and how many memories hold
    no tag; the latest sessions (latest first), how many other sessions there are with how many
    memories, and how many memories have no session."""

    tags: list[TagCount]
    more_tags: int
    untagged: int
    sessions: list[SessionSpan]
    more_sessions: int
    more_session_memories: int
    without_session: int


Direction = Literal["outgoing", "incoming"]


@dataclass(frozen=True, slots=True)
class LinkWrite:
    """What ``insert_link`` did: ``missing`` ids refused it, and so did a ``cycle`` (the existing
    supersedes chain from ``to_id`` back to ``from_id`` that the link would close). ``weight`` is
    the link's weight now; ``previous`` its weight before, when linking again gave it another."""

    created: bool = False
    missing: tuple[str, ...] = ()
    cycle: tuple[str, ...] = ()
    weight: float = DEFAULT_WEIGHT
    previous: float | None = None


@dataclass(frozen=True, slots=True)
class Neighbour:
    """A memory reached from the start: the link of the last hop (``outgoing`` when it points from
    the nearer memory to this one), its depth, and the ids from the start to this memory."""

    memory_id: str
    relation: str
    direction: Direction
    note: str | None
    depth: int
    path: tuple[str, ...]
    weight: float = DEFAULT_WEIGHT


@dataclass(frozen=True, slots=True)
class Neighbourhood:
    """The memories linked to ``start`` up to some depth, nearest first; ``truncated`` when the
    limit stopped the walk before it was complete."""

    start: str
    found: tuple[Neighbour, ...]
    truncated: bool


@dataclass(frozen=True, slots=True)
class ChunkRow:
    """Which memory holds which chunk of a source, with the hash of its text and its place."""

    memory_id: str
    chunk_key: str
    content_hash: str
    position: int


@dataclass(frozen=True, slots=True)
class SourceRecord:
    key: str
    loader_type: str
    fingerprint: str
    state: dict[str, Any]
    loaded_at: datetime


@dataclass(frozen=True, slots=True)
class SourceWrite:
    """Everything one sync writes for a source: new memories, rewritten ones (same id, kept access
    history), removed ids, the full chunk table, structure edges (directed) and outgoing links."""

    key: str
    loader_type: str
    fingerprint: str
    state: Mapping[str, Any]
    added: Sequence[CognitiveMemory] = ()
    rewritten: Sequence[CognitiveMemory] = ()
    removed: Sequence[str] = ()
    chunks: Sequence[ChunkRow] = ()
    edges: Sequence[tuple[str, str, str, float]] = ()
    links: Sequence[tuple[str, str]] = ()


@dataclass(frozen=True, slots=True)
class LinkRow:
    """A user link as stored: ``from_id`` -[relation]-> ``to_id``, its note, when and by which
    session it was made (``created_at`` in seconds since the epoch), and its weight (None: the
    default, for a link from a file written before links had weights)."""

    from_id: str
    to_id: str
    relation: str
    note: str | None
    created_at: float
    session_id: str | None = None
    weight: float | None = None


@dataclass(frozen=True, slots=True)
class ImportWrite:
    """What an import writes: memories to insert as they are, their earlier ``versions``, changed
    memories as ``(new, previous)`` pairs, and links to add once all memories are in."""

    added: Sequence[CognitiveMemory] = ()
    versions: Sequence[VersionRow] = ()
    updated: Sequence[tuple[CognitiveMemory, CognitiveMemory]] = ()
    links: Sequence[LinkRow] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class SkippedLink:
    """A link a restore did not bring back: it would close the supersedes ``cycle`` (the chain
    from ``to_id`` back to ``from_id`` that exists now)."""

    from_id: str
    to_id: str
    relation: str
    cycle: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Restored:
    """What a restore did: the entries brought back (``(entry, memory id)``), those left in the trash
    because their memory id is in use again, the entries of the same memories kept as versions
    (``folded``), the links it refused, and the memories brought back without their key
    (``unkeyed``: another memory of their project holds it now)."""

    restored: list[tuple[int, str]]
    in_use: list[tuple[int, str]]
    folded: list[int]
    skipped_links: list[SkippedLink]
    unkeyed: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class TrashRow:
    """What the trash shows of one entry: its number, the memory, when, why and by which session it
    went there (and, when consolidated, the id of the memory it was merged into). A memory forgotten
    more than once (re-imported in between) has one entry each time."""

    entry: int
    id: str
    content: str
    project: str
    trashed_at: float
    reason: str
    trashed_by: str | None
    consolidated_into: str | None = None


@dataclass(frozen=True, slots=True)
class WordDocument:
    """A memory's own text (with its key: ``terms.keyed_text``) and its temporal neighbours'
    (their ids beside them)."""

    content: str
    neighbours: tuple[str, ...] = ()
    neighbour_ids: tuple[str, ...] = ()


WordsProgress = tuple[int, int]  # (memories whose words are built, memories in the store)


class TableRows(NamedTuple):
    """A page of one table's rows as a store of record holds them, with the names of their
    columns: what a store moved into another is carried in (``StoreOfRecord.copy_into``)."""

    table: str
    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]
