"""The trash: what forget, prune and consolidate moved there, brought back or deleted for good
(`memory_system trash`, the dashboard's trash page); answers and their text."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime

from pydantic import BaseModel, Field

from cognitive_memory.core.memory import GLOBAL_PROJECT
from cognitive_memory.core.pruning import DAY_SECONDS
from cognitive_memory.core.store.values import TrashRow
from cognitive_memory.core.validation import ALL_PROJECTS, check_project
from cognitive_memory.lifecycle import forgetting
from cognitive_memory.service.fields import optional
from cognitive_memory.service.records import memories
from cognitive_memory.system import CognitiveSystem

__all__ = [
    "PREVIEW_CHARS",
    "SHOWN",
    "EmptyTrashResult",
    "RestoreResult",
    "SkippedLinkOut",
    "TrashEntryOut",
    "TrashListResult",
    "TrashedOut",
    "UndoResult",
    "empty_trash",
    "format_empty",
    "format_restore",
    "format_trash",
    "format_undo",
    "list_trash",
    "restore",
    "trash_projects",
    "trashed_ids",
    "undo",
]

PREVIEW_CHARS = 100
# Entries restore_memories lists when given no ids.
UNDO_SHOWN = 20
# Lines of a prune's or the trash's list shown to people (--json and MCP carry them all).
SHOWN = 50


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
    total: int = Field(description="How many entries the trash holds (of the projects listed).")
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
    unkeyed: list[str] = Field(
        default_factory=list,
        exclude_if=lambda value: not value,
        description="Restored without their key: another memory holds it now.",
    )
    message: str


class TrashedOut(BaseModel):
    """A memory in the trash, briefly."""

    id: str
    preview: str
    project: str
    trashed_at: str
    reason: str


class UndoResult(BaseModel):
    success: bool = True
    trash: list[TrashedOut] | None = optional("Newest first (no ids given).")
    restore: RestoreResult | None = optional("What restoring the ids did.")
    message: str


class EmptyTrashResult(BaseModel):
    success: bool = True
    purged: int = Field(description="How many memories were deleted for good.")
    message: str


def trashed_ids(system: CognitiveSystem, memory_ids: Sequence[str]) -> list[str]:
    """Those of ``memory_ids`` the trash holds."""
    return [row.id for row in system.browsing.in_trash(memory_ids)]


def _entry_out(row: TrashRow) -> TrashEntryOut:
    return TrashEntryOut(
        entry=row.entry,
        id=row.id,
        preview=row.content[:PREVIEW_CHARS],
        project=row.project,
        trashed_at=datetime.fromtimestamp(row.trashed_at, UTC).isoformat(),
        reason=row.reason,
        trashed_by=row.trashed_by,
        consolidated_into=row.consolidated_into,
    )


def trash_projects(project: str) -> list[str]:
    """The projects a look at the trash covers: ``project`` (checked as every project name is)
    and the global memories; ``'*'`` (ALL_PROJECTS) every project, as the empty list."""
    if project.strip() == ALL_PROJECTS:
        return []
    return list(dict.fromkeys((check_project(project), GLOBAL_PROJECT)))


def _elsewhere(system: CognitiveSystem, projects: Sequence[str], total: int) -> int:
    """How many trash entries lie outside ``projects`` (none when they are every project)."""
    return system.browsing.trash_entries(0)[1] - total if projects else 0


def _scope_words(projects: Sequence[str]) -> str:
    if not projects:
        return "every project"
    return f"project {projects[0]!r}" + (" and global" if len(projects) > 1 else "")


def _other_projects(count: int, listed: int) -> str:
    """What a scoped listing says of the trash of the other projects: never "empty" when it is not."""
    if not count:
        return ""
    more = " more" if listed else ""
    return f"; {count}{more} in other projects (project '{ALL_PROJECTS}' lists them)"


def list_trash(system: CognitiveSystem, limit: int, project: str = ALL_PROJECTS) -> TrashListResult:
    """The forgotten and pruned memories still restorable, the latest first: of ``project`` and
    the global memories, or (``'*'``, the default) of every project."""
    projects = trash_projects(project)
    rows, total = system.browsing.trash_entries(limit, projects)
    distinct = system.browsing.trashed_memory_count(projects)
    days = float(system.configuration.get("trash_days", 30))
    shown = f", the {len(rows)} latest listed" if len(rows) < total else ""
    entries = f" in {total} entries (one per time it was forgotten)" if total != distinct else ""
    where = f" of {_scope_words(projects)}" if projects else ""
    elsewhere = _elsewhere(system, projects, total)
    if total:
        message = (
            f"{memories(distinct)} in the trash{where}{entries}{shown}; each entry is purged {days:g} "
            "days after it went there"
        )
    else:
        message = f"Nothing in the trash{where}" if elsewhere else "The trash is empty"
    return TrashListResult(
        total=total,
        memories=distinct,
        entries=[_entry_out(row) for row in rows],
        trash_days=days,
        message=message + _other_projects(elsewhere, total),
    )


def restore(system: CognitiveSystem, memory_ids: Sequence[str], entries: Sequence[int] = ()) -> RestoreResult:
    """Restore the newest entry of each id and the entries named; say what stayed and why."""
    ids, numbers = list(dict.fromkeys(memory_ids)), list(dict.fromkeys(entries))
    done = forgetting.restore(system, ids, numbers)
    restored = [memory_id for _, memory_id in done.restored]
    in_use = list(dict.fromkeys(memory_id for _, memory_id in done.in_use))
    reached = {n for n, _ in done.restored + done.in_use} | set(done.folded)
    skipped = [
        SkippedLinkOut(
            from_id=link.from_id,
            to_id=link.to_id,
            relation=link.relation,
            reason=f"it would close a supersedes cycle ({' supersedes '.join(link.cycle)})",
        )
        for link in done.skipped_links
    ]
    result = RestoreResult(
        restored=restored,
        missing=[i for i in ids if i not in restored and i not in in_use],
        missing_entries=[n for n in numbers if n not in reached],
        in_use=in_use,
        versions_added=len(done.folded),
        skipped_links=skipped,
        unkeyed=done.unkeyed,
        message="",
    )
    return result.model_copy(update={"message": _restore_message(result, len(ids) + len(numbers))})


def _restore_message(result: RestoreResult, asked: int) -> str:
    parts = [f"Restored {len(result.restored)} of {asked} memories"]
    if result.versions_added:
        parts.append(f"{result.versions_added} older trash entries of them kept as versions")
    if result.in_use:
        parts.append(f"{len(result.in_use)} in use again (forget it first to restore its entry)")
    if result.skipped_links:
        parts.append(f"{len(result.skipped_links)} links left out: each would close a supersedes cycle")
    if result.unkeyed:
        parts.append(f"{len(result.unkeyed)} without their key (another memory holds it now)")
    return "; ".join(parts)


def undo(system: CognitiveSystem, memory_ids: Sequence[str], project: str) -> UndoResult:
    """Restore ``memory_ids`` (restore_memories), whatever their project; without ids, the newest
    UNDO_SHOWN entries of the trash of ``project`` and the global memories (``'*'``: of every
    project), briefly, saying how many other projects' trash holds."""
    projects = trash_projects(project)
    if memory_ids:
        restored = restore(system, memory_ids)
        return UndoResult(restore=restored, message=restored.message)
    rows, total = system.browsing.trash_entries(UNDO_SHOWN, projects)
    listed = [
        TrashedOut(
            id=row.id,
            preview=row.content[:PREVIEW_CHARS],
            project=row.project,
            trashed_at=datetime.fromtimestamp(row.trashed_at, UTC).isoformat(timespec="seconds"),
            reason=row.reason,
        )
        for row in rows
    ]
    elsewhere = _elsewhere(system, projects, total)
    shown = f", the {len(rows)} latest listed" if len(rows) < total else ""
    entries = f"{total} {'entry' if total == 1 else 'entries'}"
    if total:
        message = f"{entries} in the trash of {_scope_words(projects)}{shown}"
    else:
        message = f"Nothing in the trash of {_scope_words(projects)}" if elsewhere else "The trash is empty"
    return UndoResult(trash=listed, message=message + _other_projects(elsewhere, total))


def format_undo(result: UndoResult) -> str:
    """The trash listed briefly, or what restoring did."""
    if result.restore is not None:
        return format_restore(result.restore)
    lines = [f"🗑 {result.message}"]
    for entry in result.trash or []:
        lines += [f"{entry.id}  {entry.trashed_at}  {entry.reason}  [{entry.project}]", f"   {entry.preview}"]
    return "\n".join(lines)


def empty_trash(system: CognitiveSystem, older_than_days: float | None) -> EmptyTrashResult:
    """Delete trashed memories for good (only those trashed more than N days ago, if given)."""
    before = time.time() - older_than_days * DAY_SECONDS if older_than_days is not None else None
    purged = forgetting.purge(system, before)
    scope = f" trashed more than {older_than_days:g} days ago" if older_than_days is not None else ""
    return EmptyTrashResult(purged=purged, message=f"Deleted {purged} memories{scope} for good")


def format_trash(result: TrashListResult) -> str:
    lines = [f"🗑 {result.message}"]
    for entry in result.entries[:SHOWN]:
        lines += [
            f"#{entry.entry}  {entry.id}  {entry.trashed_at[:19]}  {entry.reason}  [{entry.project}]"
            + (f"  into {entry.consolidated_into}" if entry.consolidated_into else ""),
            f"   {entry.preview}",
        ]
    return "\n".join(lines)


def format_restore(result: RestoreResult) -> str:
    lines = [f"✓ {result.message}" if result.restored else f"✗ {result.message}"]
    lines += [f"Restored: {memory_id}" for memory_id in result.restored]
    lines += [f"Not in the trash: {memory_id}" for memory_id in result.missing]
    lines += [f"Not in the trash: entry {entry}" for entry in result.missing_entries]
    lines += [
        f"In use: {memory_id} exists again (its trash entry stays; forget it first to restore the entry)"
        for memory_id in result.in_use
    ]
    lines += [f"Link left out: {s.from_id} {s.relation} {s.to_id}: {s.reason}" for s in result.skipped_links]
    lines += [f"Without its key: {memory_id} (another memory holds it now)" for memory_id in result.unkeyed]
    return "\n".join(lines)


def format_empty(result: EmptyTrashResult) -> str:
    return f"✓ {result.message}"
