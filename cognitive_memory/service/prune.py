"""Prune: move old, unused or unimportant memories to the trash, a dry run with a confirm token
first (prune_memories, `memory_system prune`); its request, answer and text."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from cognitive_memory.core.pruning import MAX_PRUNE, PruneCandidate, PruneCriteria, reasons
from cognitive_memory.core.validation import MAX_TAG_CHARS, MAX_TAGS
from cognitive_memory.lifecycle import forgetting
from cognitive_memory.service.fields import Importance, JsonNumber, LevelValue, ProjectName
from cognitive_memory.service.records import memories
from cognitive_memory.service.trash import PREVIEW_CHARS, SHOWN
from cognitive_memory.system import CognitiveSystem

__all__ = [
    "KeepLatest",
    "MaxImportance",
    "NotAccessedDays",
    "OlderThanDays",
    "PruneCandidateOut",
    "PruneLevels",
    "PruneProjects",
    "PruneRequest",
    "PruneResult",
    "PruneTags",
    "format_prune",
    "prune",
]

PruneDays = Annotated[float, Field(ge=0, le=36500), JsonNumber]
# The criteria of prune_memories, one type each: the tool's parameters and PruneRequest share them.
OlderThanDays = PruneDays | None
NotAccessedDays = PruneDays | None
MaxImportance = Importance | None
PruneTags = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=MAX_TAG_CHARS)]],
    Field(max_length=MAX_TAGS),
]
PruneProjects = Annotated[list[ProjectName], Field(max_length=50, description="Default: every project.")]
PruneLevels = list[Annotated[LevelValue, JsonNumber]]
KeepLatest = Annotated[int, Field(ge=0, le=1_000_000, description="Spare the N newest matches."), JsonNumber]


class PruneRequest(BaseModel):
    """What prune_memories moves to the trash: memories matching every criterion given."""

    model_config = ConfigDict(extra="forbid")

    older_than_days: OlderThanDays = None
    not_accessed_days: NotAccessedDays = None
    max_importance: MaxImportance = None
    tags: PruneTags = Field(default_factory=list)
    projects: PruneProjects = Field(default_factory=list)
    hierarchy_levels: PruneLevels = Field(default_factory=list)
    keep_latest: KeepLatest = 0

    def criteria(self) -> PruneCriteria:
        """The core's criteria (refused there when none selects memories)."""
        return PruneCriteria(
            older_than_days=self.older_than_days,
            not_accessed_days=self.not_accessed_days,
            max_importance=self.max_importance,
            tags=tuple(dict.fromkeys(self.tags)),
            projects=tuple(dict.fromkeys(self.projects)),
            hierarchy_levels=tuple(dict.fromkeys(self.hierarchy_levels)),
            keep_latest=self.keep_latest,
        )


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


def prune(
    system: CognitiveSystem, request: PruneRequest, dry_run: bool, confirm: str | None, session_id: str
) -> PruneResult:
    """A dry run lists what would go with its confirm token; a real run needs that token."""
    criteria = request.criteria()
    now = time.time()
    plan = forgetting.plan_prune(system, criteria, now)
    listed = [_candidate_out(c, reasons(c, criteria, now)) for c in plan.candidates]
    more = f" (the oldest {MAX_PRUNE} of {plan.matching} listed)" if plan.matching > len(listed) else ""
    if dry_run:
        return PruneResult(
            dry_run=True,
            matching=plan.matching,
            memories=listed,
            confirm=plan.confirm if listed else None,
            confirm_expires_at=datetime.fromtimestamp(plan.expires_at, UTC).isoformat() if listed else None,
            message=f"Dry run: {memories(len(listed))} would go to the trash{more}"
            + ("; nothing changed yet (confirm within 10 minutes)" if listed else ""),
        )
    moved = set(forgetting.prune(system, criteria, confirm, session_id))
    gone = [item for item in listed if item.id in moved]
    return PruneResult(
        dry_run=False,
        matching=plan.matching,
        memories=gone,
        message=f"Moved {memories(len(gone))} to the trash{more}: `memory_system trash restore ID` brings "
        "one back",
    )


def _candidate_out(candidate: PruneCandidate, why: list[str]) -> PruneCandidateOut:
    return PruneCandidateOut(
        id=candidate.id, preview=candidate.content[:PREVIEW_CHARS], project=candidate.project, why=why
    )


def format_prune(result: PruneResult) -> str:
    lines = [f"✂ {result.message}"]
    for item in result.memories[:SHOWN]:
        lines += [f"{item.id}  [{item.project}]  {'; '.join(item.why)}", f"   {item.preview}"]
    if len(result.memories) > SHOWN:
        lines.append(f"... and {len(result.memories) - SHOWN} more (--json lists them all)")
    if result.confirm:
        lines.append(f"Confirm token: {result.confirm}")
    return "\n".join(lines)
