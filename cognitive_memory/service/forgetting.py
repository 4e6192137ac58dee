"""The trash and prune behind MemoryService: answers shaped for the MCP tools and the typer commands,
and their text for people."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime

from cognitive_memory import forgetting
from cognitive_memory.core.memory import CognitiveMemory
from cognitive_memory.core.pruning import DAY_SECONDS, MAX_PRUNE, PruneCandidate, reasons
from cognitive_memory.loaders.notes import LOADER_TYPE as MARKDOWN_LOADER
from cognitive_memory.service.formatting import memories
from cognitive_memory.service.requests import PruneRequest
from cognitive_memory.service.trash_schemas import (
    EmptyTrashResult,
    PruneCandidateOut,
    PruneResult,
    RestoreResult,
    SkippedLinkOut,
    TrashEntryOut,
    TrashListResult,
)
from cognitive_memory.storage.trash import TrashRow
from cognitive_memory.system import CognitiveSystem

__all__ = [
    "PREVIEW_CHARS",
    "empty_trash",
    "format_empty",
    "format_prune",
    "format_restore",
    "format_trash",
    "is_loaded",
    "list_trash",
    "loaded_reason",
    "prune",
    "restore",
    "trash_entry",
]

PREVIEW_CHARS = 100
# Lines of a prune's or the trash's list shown to people (--json and MCP carry them all).
SHOWN = 50


def is_loaded(memory: CognitiveMemory | None) -> bool:
    """Loaded from a markdown file or a git history: their source, not forget, changes them."""
    return memory is not None and memory.loader_type in forgetting.LOADED_TYPES


def loaded_reason(memory: CognitiveMemory) -> str:
    if memory.loader_type == MARKDOWN_LOADER:
        path = memory.metadata.get("source_path", "its file")
        return (
            f"loaded from {path}: edit the file and load it again, or run `memory_system remove-file {path}`"
        )
    repository = memory.metadata.get("repository_path", "its repository")
    return f"a pattern of {repository}'s history: `memory_system git-load` keeps it in step with the history"


def trash_entry(row: TrashRow) -> TrashEntryOut:
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


def list_trash(system: CognitiveSystem, limit: int) -> TrashListResult:
    rows, total = system.memories.trash.entries(limit)
    distinct = system.memories.trash.memory_count()
    days = float(system.configuration.get("trash_days", 30))
    shown = f", the {len(rows)} latest listed" if len(rows) < total else ""
    entries = f" in {total} entries (one per time it was forgotten)" if total != distinct else ""
    return TrashListResult(
        total=total,
        memories=distinct,
        entries=[trash_entry(row) for row in rows],
        trash_days=days,
        message=f"{memories(distinct)} in the trash{entries}{shown}; each entry is purged {days:g} days "
        "after it went there"
        if total
        else "The trash is empty",
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
    return "; ".join(parts)


def empty_trash(system: CognitiveSystem, older_than_days: float | None) -> EmptyTrashResult:
    before = time.time() - older_than_days * DAY_SECONDS if older_than_days is not None else None
    purged = system.memories.trash.purge(before)
    scope = f" trashed more than {older_than_days:g} days ago" if older_than_days is not None else ""
    return EmptyTrashResult(purged=purged, message=f"Deleted {purged} memories{scope} for good")


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
    return "\n".join(lines)


def format_empty(result: EmptyTrashResult) -> str:
    return f"✓ {result.message}"


def format_prune(result: PruneResult) -> str:
    lines = [f"✂ {result.message}"]
    for item in result.memories[:SHOWN]:
        lines += [f"{item.id}  [{item.project}]  {'; '.join(item.why)}", f"   {item.preview}"]
    if len(result.memories) > SHOWN:
        lines.append(f"... and {len(result.memories) - SHOWN} more (--json lists them all)")
    if result.confirm:
        lines.append(f"Confirm token: {result.confirm}")
    return "\n".join(lines)
