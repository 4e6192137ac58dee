"""Pydantic shapes at the boundary: tool inputs' enums and every answer's structured content."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from cognitive_memory.service.trash_schemas import LastConsolidationOut

__all__ = [
    "BriefMemoryOut",
    "BridgeOut",
    "DeleteResult",
    "Detail",
    "ErrorResult",
    "ForgetResult",
    "GetResult",
    "KeptOut",
    "LinkDirection",
    "LinkResult",
    "GitLoadResult",
    "LessonResult",
    "LessonType",
    "LevelValue",
    "ListResult",
    "MemoryTypeName",
    "ImportanceLevel",
    "MemoryCountsOut",
    "MemoryOut",
    "MemoryRecordOut",
    "OrderBy",
    "RecallLists",
    "RecallResult",
    "RecallSource",
    "RecallType",
    "RelatedOut",
    "RelatedResult",
    "RelationName",
    "ScoreOut",
    "SimilarOut",
    "StatusResult",
    "StorageStatsOut",
    "StoreResult",
    "UnlinkResult",
    "VersionOut",
    "UpdateResult",
]

RecallType = Literal["core", "peripheral", "bridge"]
# How much of each memory a recall answer holds (BriefMemoryOut or the whole MemoryOut record).
Detail = Literal["brief", "full"]
# Values recall_memories' filters accept (one definition for the MCP schema and the facade's check).
LevelValue = Literal[0, 1, 2]
MemoryTypeName = Literal["episodic", "semantic"]
RecallSource = Literal["markdown", "git", "session_lesson"]
LessonType = Literal["discovery", "pattern", "solution", "warning", "context"]
ImportanceLevel = Literal["low", "medium", "high", "critical"]
# Typed links between memories (link_memories); the core's RELATIONS holds the same names.
RelationName = Literal["relates_to", "supersedes", "contradicts", "caused_by", "example_of", "part_of"]
LinkDirection = Literal["outgoing", "incoming"]
# list_memories' orders, each newest or highest first.
OrderBy = Literal["created", "last_accessed", "importance", "access_count"]


class SimilarOut(BaseModel):
    """A memory close to one just stored."""

    id: str
    similarity: float = Field(description="Cosine similarity to the stored text.")
    preview: str = Field(description="Its first 200 characters.")


class StoreResult(BaseModel):
    success: bool = True
    memory_id: str
    hierarchy_level: int
    memory_type: str
    importance_score: float
    tags: list[str]
    project: str
    stored_at: str
    queued: bool = Field(description="True when the vector waits in the outbox for the index.")
    retry_in_seconds: float | None = Field(
        default=None, description="When queued: seconds until the index is retried (it drains by itself)."
    )
    duplicate: bool = Field(
        default=False,
        description="The same text was already stored in this project: memory_id is that memory.",
    )
    novelty: float | None = Field(
        default=None,
        description="1 - the highest cosine to another memory of the project (1.0: nothing alike).",
    )
    similar: list[SimilarOut] = Field(
        default_factory=list, description="Near duplicates: consider update_memory on one of them instead."
    )
    message: str


class ScoreOut(BaseModel):
    """Why a memory ranked where it did.

    total = (relevance + activation + speaker) x lesson_boost + weighted terms. similarity is the
    cosine to the query; semantic and lexical are the normalised meaning and word (BM25) scores,
    fused into relevance; activation spread to it from related candidates; speaker is the boost it
    got because the query names who said it (the speaker recorded for a conversation turn). words
    (rarity-weighted share of the query's words it holds), evidence (similarity + 0.5 x words) and
    linked (activation from memories that passed on their own) are what the relevance floor read.
    """

    similarity: float
    semantic: float
    lexical: float
    relevance: float
    activation: float
    speaker: float
    importance: float
    recency: float
    strength: float
    lesson_boost: float
    total: float
    words: float = 0.0
    evidence: float = 0.0
    linked: float = 0.0


class MemoryOut(BaseModel):
    id: str
    content: str
    hierarchy_level: int
    memory_type: str
    rank: int | None = None
    similarity_score: float | None = None
    score: ScoreOut | None = None
    strength: float
    importance_score: float
    source_info: str
    created_date: str
    source_date: str | None = None
    modified_date: str | None = None
    last_accessed: str | None = None
    access_count: int
    tags: list[str]
    project: str
    metadata: dict[str, Any]
    superseded_by: list[str] = Field(
        default_factory=list, description="Ids of memories that supersede this one (see link_memories)."
    )


class BridgeOut(MemoryOut):
    bridge_score: float
    novelty_score: float
    connection_potential: float
    explanation: str
    connected_to: str | None = None


class BriefMemoryOut(BaseModel):
    """A recalled memory as ``detail: brief`` gives it: what a model needs to use it, nothing more."""

    id: str
    content: str = Field(description="The whole text, or its first 1500 characters when truncated.")
    truncated: bool | None = Field(
        default=None, description="Present (true) when content was cut: get_memories returns it whole."
    )
    level: int = Field(description="0 concept, 1 context, 2 episode.")
    type: str = Field(description="episodic or semantic.")
    score: float = Field(description="The ranking score (a bridge: its bridge score).")
    reason: str = Field(
        description="What found it: meaning, words (share of the query's words), linked (from "
        "another result), speaker; a bridge: the core memory it is close to."
    )
    source: str
    date: str = Field(description="When it happened (source date) or was stored, YYYY-MM-DD.")
    tags: list[str] | None = Field(default=None, description="Absent when it has none.")
    project: str
    superseded_by: list[str] | None = Field(
        default=None, description="Ids of memories that supersede it (absent when none)."
    )


class RecallLists(BaseModel):
    core: list[BriefMemoryOut | MemoryOut] = Field(default_factory=list)
    peripheral: list[BriefMemoryOut | MemoryOut] = Field(default_factory=list)
    bridge: list[BriefMemoryOut | BridgeOut] = Field(default_factory=list)


class RecallResult(BaseModel):
    success: bool = True
    query: str
    detail: Detail = "full"
    total_results: int
    memories: RecallLists
    degraded: bool = Field(
        default=False, description="True when the vector index was unavailable and recall used words only."
    )
    message: str | None = Field(
        default=None, description="Why nothing was returned, or that some contents were truncated."
    )


class LessonResult(BaseModel):
    success: bool = True
    lesson_id: str
    lesson_type: str
    importance_level: str
    session_id: str
    hierarchy_level: int
    memory_type: str
    stored_at: str
    queued: bool
    project: str
    duplicate: bool = False
    message: str
    suggestion: str


class MemoryCountsOut(BaseModel):
    total_memories: int
    level_0_concepts: int
    level_1_contexts: int
    level_2_episodes: int
    episodic_memories: int
    semantic_memories: int
    session_lessons: int
    by_project: dict[str, int] = Field(default_factory=dict, description="Memories per project.")


class StorageStatsOut(BaseModel):
    qdrant_backend: str
    qdrant_mode: str
    qdrant_status: str
    qdrant_location: str
    vector_count: int | None
    storage_size_mb: float
    database_path: str
    database_size_mb: float
    pending_vector_writes: int


class StatusResult(BaseModel):
    success: bool = True
    system_status: Literal["healthy", "degraded"]
    memory_counts: MemoryCountsOut
    storage_stats: StorageStatsOut
    recent_activity: dict[str, str | None]
    configuration: dict[str, Any]
    last_consolidation: LastConsolidationOut | None = Field(
        default=None, description="The last `memory_system consolidate --apply` (null: never ran)."
    )


class DeleteResult(BaseModel):
    success: bool = True
    deleted: list[str]
    missing: list[str]


class KeptOut(BaseModel):
    id: str
    reason: str


class ForgetResult(BaseModel):
    success: bool = True
    forgotten: list[str]
    missing: list[str]
    kept: list[KeptOut]
    message: str


class LinkResult(BaseModel):
    success: bool = True
    from_id: str
    to_id: str
    relation: RelationName
    note: str | None = None
    created: bool = Field(description="False when the link already existed (it was left as it was).")
    message: str


class UnlinkResult(BaseModel):
    success: bool = True
    from_id: str
    to_id: str
    removed: list[RelationName] = Field(description="The relations removed; empty when there was no link.")
    message: str


class RelatedOut(BaseModel):
    """A memory linked to the start, by the last link of its path."""

    id: str
    content: str = Field(description="Its first 200 characters.")
    relation: RelationName
    direction: LinkDirection = Field(
        description="outgoing: the link points from the previous memory of the path to this one; "
        "incoming: from this one to the previous memory."
    )
    depth: int = Field(description="Links between the start and this memory (1-3).")
    path: list[str] = Field(description="Ids from the start to this memory.")
    note: str | None = None


class RelatedResult(BaseModel):
    success: bool = True
    memory_id: str
    depth: int
    relations: list[RelationName] = Field(description="The relations followed; empty: all.")
    related: list[RelatedOut] = Field(description="Nearest first; each memory once, at its smallest depth.")
    truncated: bool = Field(description="True when more memories were linked than the answer holds.")
    message: str


class VersionOut(BaseModel):
    """An earlier version of a memory, as it was before an update replaced it."""

    version: int = Field(description="1 is the oldest.")
    content: str
    hierarchy_level: int
    memory_type: str
    importance_score: float
    tags: list[str]
    project: str
    metadata: dict[str, Any]
    replaced_at: str = Field(description="When an update replaced this version (ISO 8601).")
    replaced_by_session: str | None = None


class MemoryRecordOut(MemoryOut):
    history: list[VersionOut] | None = Field(
        default=None, description="Earlier versions, oldest first (only with include_history)."
    )


class GetResult(BaseModel):
    success: bool = True
    memories: list[MemoryRecordOut] = Field(description="The memories found, in the order asked.")
    missing: list[str] = Field(description="Ids that do not exist (never stored, or forgotten).")
    in_trash: list[str] = Field(
        default_factory=list, description="Missing ids still in the trash (memory_system trash restore)."
    )
    message: str


class ListResult(BaseModel):
    success: bool = True
    order_by: OrderBy
    total: int = Field(description="How many memories match the filters, on every page together.")
    memories: list[MemoryOut]
    next_cursor: str | None = Field(
        description="Pass it as cursor (with the same order_by) for the next page; None on the last page."
    )
    message: str


class SkippedOut(BaseModel):
    path: str
    reason: str


class ChunkCountsOut(BaseModel):
    added: int
    updated: int
    removed: int
    unchanged: int


class LoadResult(BaseModel):
    """What a markdown load did. ``files_loaded`` were new or changed; ``skipped`` could not be read."""

    success: bool = True
    root: str
    files: int
    files_loaded: int
    files_unchanged: int
    files_removed: int
    chunks: ChunkCountsOut
    skipped: list[SkippedOut]
    seconds: float
    model_load_seconds: float
    memories_per_second: float


class WatchResult(BaseModel):
    """One debounced batch of changes that ``watch`` applied."""

    changed: list[str]
    removed: list[str]
    chunks: ChunkCountsOut
    skipped: list[SkippedOut]


class RemoveResult(BaseModel):
    success: bool = True
    path: str
    files_removed: int
    memories_removed: int


class ErrorResult(BaseModel):
    success: bool = False
    error: str
    message: str


class GitLoadResult(BaseModel):
    """What `git-load` did to one repository's history patterns."""

    success: bool = True
    repository: str = Field(description="Real path of the repository's working tree.")
    name: str
    head: str | None = Field(description="The commit loaded (None for a repository without commits).")
    commits_read: int = Field(description="Commits read by this run (0 when HEAD had not moved).")
    commits_total: int = Field(description="Commits of the history the patterns are drawn from.")
    full_walk: bool = Field(description="The whole history was read (first load or rewritten history).")
    patterns: dict[str, int] = Field(description="Patterns found, by type: cochange, hotspot, solution.")
    memories: ChunkCountsOut
    seconds: float
    model_load_seconds: float
    memories_per_second: float


class UpdateResult(BaseModel):
    success: bool = True
    memory_id: str
    changed: list[str] = Field(description="The fields that changed (empty: nothing did, no version kept).")
    version: int | None = Field(description="The version number the previous state was kept as.")
    reembedded: bool = Field(description="The text changed: it was embedded and indexed again.")
    queued: bool = Field(description="True when the new vector waits in the outbox for the index.")
    memory: MemoryOut
    message: str
