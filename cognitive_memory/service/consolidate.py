"""Consolidation behind `memory_system consolidate`: its answer as `--json` publishes it, and its
text for people. Also the `last_consolidation` that `memory_status` reports."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime

from pydantic import BaseModel, Field

from cognitive_memory.lifecycle import consolidation
from cognitive_memory.storage.consolidation import LAST_CONSOLIDATION
from cognitive_memory.system import CognitiveSystem

__all__ = [
    "ConsolidateResult",
    "DuplicateGroupOut",
    "LastConsolidationOut",
    "consolidate",
    "format_consolidate",
    "last_consolidation_out",
]

PREVIEW_CHARS = 100
# Groups shown to people (--json carries them all).
SHOWN = 50

Advance = Callable[[int, int], None]
Meta = Callable[[str], str | None]


class LastConsolidationOut(BaseModel):
    at: str = Field(description="When the last `memory_system consolidate --apply` ran (ISO 8601, UTC).")
    threshold: float = Field(description="The cosine it merged at.")
    scanned: int = Field(description="Memories it considered.")
    groups: int = Field(description="Groups merged, one survivor each.")
    trashed: int = Field(description="Memories moved to the trash (reason consolidated).")
    links: int = Field(description="User links pointed at the survivors.")


class DuplicateMemberOut(BaseModel):
    id: str
    preview: str = Field(description="The first 100 characters of the memory.")
    access_count: int
    similarity: float = Field(description="Cosine to the survivor (1.0 for the survivor itself).")


class DuplicateGroupOut(BaseModel):
    project: str
    survivor: DuplicateMemberOut = Field(
        description="The memory kept: most accessed, then oldest, then longest."
    )
    merged: list[DuplicateMemberOut] = Field(description="What goes (dry run) or went to the trash.")


class ConsolidateResult(BaseModel):
    success: bool = True
    dry_run: bool
    threshold: float = Field(description="The cosine at or above which two memories are duplicates.")
    scanned: int = Field(description="Memories considered (loaded memories are never considered).")
    groups: list[DuplicateGroupOut]
    trashed: int = Field(description="Memories that would go (dry run) or went to the trash.")
    links: int = Field(default=0, description="User links pointed at the survivors.")
    message: str


def consolidate(
    system: CognitiveSystem,
    threshold: float | None,
    project: str | None,
    session_id: str | None,
    *,
    apply: bool = False,
    advance: Advance | None = None,
) -> ConsolidateResult:
    """Plan (and with ``apply`` carry out) a consolidation; the answer lists the groups."""
    plan = consolidation.plan_consolidation(system, threshold, project, advance=None if apply else advance)
    groups = [_group_out(group) for group in plan.groups]
    if not apply:
        going = sum(len(group.merged) for group in groups)
        return ConsolidateResult(
            dry_run=True,
            threshold=plan.threshold,
            scanned=plan.scanned,
            groups=groups,
            trashed=going,
            message=f"Dry run: {_count(len(groups), 'group')} of near duplicates among "
            f"{_count(plan.scanned, 'memory')}; {going} would go to the trash, nothing changed "
            "(--apply does it)",
        )
    merged = consolidation.apply_plan(system, plan, session_id, advance)
    kept = {result.survivor: set(result.trashed) for result in merged}
    done = [
        group.model_copy(update={"merged": [m for m in group.merged if m.id in kept[group.survivor.id]]})
        for group in groups
        if group.survivor.id in kept
    ]
    trashed, links = sum(len(ids) for ids in kept.values()), sum(result.links for result in merged)
    return ConsolidateResult(
        dry_run=False,
        threshold=plan.threshold,
        scanned=plan.scanned,
        groups=done,
        trashed=trashed,
        links=links,
        message=f"Merged {_count(len(done), 'group')}: {_count(trashed, 'memory')} moved to the trash, "
        f"{_count(links, 'link')} moved to the survivors; `memory_system trash restore ID` brings one back",
    )


def _count(number: int, noun: str) -> str:
    """``1 group``, ``3 groups``, ``2 memories``."""
    if number == 1:
        return f"1 {noun}"
    return f"{number} {noun[:-1]}ies" if noun.endswith("y") else f"{number} {noun}s"


def _group_out(group: consolidation.DuplicateGroup) -> DuplicateGroupOut:
    def member(item: consolidation.GroupMember) -> DuplicateMemberOut:
        return DuplicateMemberOut(
            id=item.id,
            preview=item.content[:PREVIEW_CHARS],
            access_count=item.access_count,
            similarity=item.similarity,
        )

    return DuplicateGroupOut(
        project=group.project, survivor=member(group.survivor), merged=[member(m) for m in group.others]
    )


def last_consolidation_out(meta: Meta) -> LastConsolidationOut | None:
    """The last applied consolidation as store_meta keeps it (``meta`` reads a key), for
    ``memory_status``; None when none ran."""
    value = meta(LAST_CONSOLIDATION)
    if not value:
        return None
    last = json.loads(value)
    return LastConsolidationOut.model_validate(
        {**last, "at": datetime.fromtimestamp(last["at"], UTC).isoformat()}
    )


def format_consolidate(result: ConsolidateResult) -> str:
    lines = [f"⧉ {result.message}"]
    for group in result.groups[:SHOWN]:
        lines.append(f"keep {group.survivor.id}  [{group.project}]  {group.survivor.preview}")
        lines += [
            f"   {'would merge' if result.dry_run else 'merged'} {m.id}  ({m.similarity:.3f})  {m.preview}"
            for m in group.merged
        ]
    if len(result.groups) > SHOWN:
        lines.append(f"... and {len(result.groups) - SHOWN} more groups (--json lists them all)")
    return "\n".join(lines)
