"""Answers of the trash and of prune, as the MCP tools and `--json` publish them."""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = [
    "EmptyTrashResult",
    "LastConsolidationOut",
    "PruneCandidateOut",
    "PruneResult",
    "RestoreResult",
    "SkippedLinkOut",
    "TrashEntryOut",
    "TrashListResult",
]


class TrashEntryOut(BaseModel):
    entry: int = Field(
        description="The entry's number: a memory forgotten more than once has one entry each time "
        "(`memory_system trash restore --entry N` brings back that one)."
    )
    id: str
    preview: str = Field(description="The first 100 characters of the memory.")
    project: str
    trashed_at: str = Field(description="When it went to the trash (ISO 8601, UTC).")
    reason: str = Field(
        description="forgotten (forget_memories), pruned (prune_memories) or consolidated "
        "(memory_system consolidate)."
    )
    trashed_by: str | None = Field(description="The session that moved it there.")
    consolidated_into: str | None = Field(
        default=None, description="Consolidated only: the id of the near duplicate it was merged into."
    )


class TrashListResult(BaseModel):
    success: bool = True
    total: int = Field(description="How many entries the trash holds.")
    memories: int = Field(description="Of how many memories (an id forgotten twice has two entries).")
    entries: list[TrashEntryOut] = Field(description="The most recently trashed first.")
    trash_days: float = Field(description="Days a memory stays restorable (COGNITIVE_MEMORY_TRASH_DAYS).")
    message: str


class SkippedLinkOut(BaseModel):
    from_id: str
    to_id: str
    relation: str
    reason: str = Field(description="Why it was not brought back (the supersedes cycle it would close).")


class RestoreResult(BaseModel):
    success: bool = True
    restored: list[str] = Field(description="The ids of the memories brought back.")
    missing: list[str] = Field(description="Ids not in the trash (never trashed, purged, or restored).")
    missing_entries: list[int] = Field(default_factory=list, description="Entry numbers not in the trash.")
    in_use: list[str] = Field(
        default_factory=list,
        description="Ids whose memory exists again (imported or stored since): their entries stay in "
        "the trash; forget the memory first to restore one.",
    )
    versions_added: int = Field(
        default=0,
        description="Other trash entries of the restored memories, kept as their versions (oldest first).",
    )
    skipped_links: list[SkippedLinkOut] = Field(
        default_factory=list, description="Links not brought back: they would close a supersedes cycle."
    )
    message: str


class EmptyTrashResult(BaseModel):
    success: bool = True
    purged: int = Field(description="How many memories were deleted for good.")
    message: str


class LastConsolidationOut(BaseModel):
    at: str = Field(description="When the last `memory_system consolidate --apply` ran (ISO 8601, UTC).")
    threshold: float = Field(description="The cosine it merged at.")
    scanned: int = Field(description="Memories it considered.")
    groups: int = Field(description="Groups merged, one survivor each.")
    trashed: int = Field(description="Memories moved to the trash (reason consolidated).")
    links: int = Field(description="User links pointed at the survivors.")


class PruneCandidateOut(BaseModel):
    id: str
    preview: str = Field(description="The first 100 characters of the memory.")
    project: str
    why: list[str] = Field(description="The criteria it matched, with its own values.")


class PruneResult(BaseModel):
    success: bool = True
    dry_run: bool
    matching: int = Field(description="How many memories match (at most 1000 are pruned per call).")
    memories: list[PruneCandidateOut] = Field(description="What goes (dry run) or went to the trash.")
    confirm: str | None = Field(
        default=None,
        description="Dry run only: pass it with dry_run false and the same criteria within 10 minutes; "
        "it prunes once, and only the memories listed, unchanged.",
    )
    confirm_expires_at: str | None = None
    message: str
