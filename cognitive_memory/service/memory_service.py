"""MemoryService: the one facade over the core that MCP tools and typer commands both call."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, cast

from cognitive_memory.core.links import check_note
from cognitive_memory.core.memory import DEFAULT_PROJECT
from cognitive_memory.core.records import MemoryEdit
from cognitive_memory.errors import LoadedMemoryError
from cognitive_memory.forgetting import trash
from cognitive_memory.loaders import load_git, load_markdown, remove_markdown
from cognitive_memory.loaders.watch import watch_markdown
from cognitive_memory.outcomes import StoreOutcome
from cognitive_memory.service import forgetting
from cognitive_memory.service.answers import (
    bridge_out,
    brief_bridge_out,
    brief_ranked_out,
    chunks_out,
    git_load_out,
    load_out,
    memory_out,
    ranked_out,
    recall_message,
    record_out,
    related_out,
    status_out,
)
from cognitive_memory.service.forgetting import is_loaded, loaded_reason
from cognitive_memory.service.lessons import IMPORTANCE_SCORES, LESSON_PLACEMENT, LESSON_SUGGESTIONS
from cognitive_memory.service.paging import (
    DEFAULT_PAGE_SIZE,
    checked_order,
    checked_size,
    decode_cursor,
    encode_cursor,
)
from cognitive_memory.service.requests import (
    MemoryChanges,
    PruneRequest,
    RecallFilters,
    StoreContext,
    scope_filter,
)
from cognitive_memory.service.schemas import (
    DeleteResult,
    Detail,
    ForgetResult,
    GetResult,
    GitLoadResult,
    KeptOut,
    LessonResult,
    LinkResult,
    ListResult,
    LoadResult,
    RecallLists,
    RecallResult,
    RelatedResult,
    RelationName,
    RemoveResult,
    SimilarOut,
    SkippedOut,
    StatusResult,
    StoreResult,
    UnlinkResult,
    UpdateResult,
    WatchResult,
)
from cognitive_memory.service.trash_schemas import (
    EmptyTrashResult,
    PruneResult,
    RestoreResult,
    TrashListResult,
)
from cognitive_memory.system import CognitiveSystem

__all__ = ["RECALL_TYPES", "MemoryService"]

RECALL_TYPES = ("core", "peripheral", "bridge")
# How a list_memories page is sorted, in its message.
_ORDER_NAMES = {
    "created": "newest first",
    "last_accessed": "most recently accessed first (never accessed last)",
    "importance": "most important first",
    "access_count": "most accessed first",
}
# Characters of a similar memory shown in a store's answer.
SIMILAR_PREVIEW = 200


class MemoryService:
    """Store, recall, record lessons and report status; answers are boundary models."""

    def __init__(
        self, system: CognitiveSystem, session_id: str | None = None, project: str | None = None
    ) -> None:
        self.system = system
        self.session_id = session_id or str(uuid.uuid4())
        # The process's project (--project, COGNITIVE_MEMORY_PROJECT); None lets a caller that
        # knows better (an MCP client's roots) choose, else ``default``.
        self.project = project

    def scope(self, project: str | None = None) -> str:
        """The project a call works in: its own argument, else the process's, else ``default``."""
        return project or self.project or DEFAULT_PROJECT

    def store_experience(
        self, text: str, context: StoreContext | None = None, *, project: str | None = None
    ) -> StoreResult:
        """Store ``text`` in the project (``context.project``, else ``project``, else the process's).
        The same text already there is not stored again: the answer names it as a duplicate."""
        given = context or StoreContext()
        metadata: dict[str, Any] = {"source_info": given.source_info} if given.source_info else {}
        if given.speaker:
            metadata["speaker"] = given.speaker
        outcome = self.system.store(
            text,
            hierarchy_level=given.hierarchy_level,
            memory_type=given.memory_type,
            importance_score=given.importance_score,
            tags=given.tags,
            metadata=metadata,
            session_id=self.session_id,
            project=given.project or self.scope(project),
        )
        memory = outcome.memory
        return StoreResult(
            memory_id=memory.id,
            hierarchy_level=int(memory.hierarchy_level),
            memory_type=memory.memory_type.value,
            importance_score=memory.importance_score,
            tags=list(memory.tags),
            project=memory.project,
            stored_at=memory.timestamp.isoformat(),
            queued=outcome.queued,
            retry_in_seconds=self.system.retry_seconds if outcome.queued else None,
            duplicate=outcome.duplicate,
            novelty=_rounded(outcome.novelty),
            similar=self._similar(outcome),
            message=_store_message(outcome),
        )

    def _similar(self, outcome: StoreOutcome) -> list[SimilarOut]:
        hits = {hit.id: hit.score for hit in outcome.similar}
        return [
            SimilarOut(
                id=memory.id, similarity=round(hits[memory.id], 4), preview=memory.content[:SIMILAR_PREVIEW]
            )
            for memory in self.system.memories.get(list(hits))
        ]

    def retrieve_memories(
        self,
        query: str,
        types: Collection[str] | None = None,
        max_results: int = 10,
        include_bridges: bool = True,
        filters: RecallFilters | None = None,
        *,
        project: str | None = None,
        detail: Detail = "full",
    ) -> RecallResult:
        """Core and peripheral memories (rank order) and bridges of the project and the global
        memories, at most ``max_results`` of them all (bridges take what the ranked ones leave);
        ``filters`` keeps only matching memories. ``detail`` brief gives each memory's text (cut at
        BRIEF_CONTENT_CHARS), one score and the reason it was found; full gives whole records."""
        wanted = set(types or RECALL_TYPES)
        bridges_wanted = include_bridges and "bridge" in wanted
        where = scope_filter(filters, self.scope(project))
        result = self.system.retrieve(
            query, max_results=max_results, include_bridges=bridges_wanted, where=where, max_total=max_results
        )
        brief = detail == "brief"
        ranked = brief_ranked_out if brief else ranked_out
        lists = RecallLists(
            core=[ranked(r) for r in result.core] if "core" in wanted else [],
            peripheral=[ranked(r) for r in result.peripheral] if "peripheral" in wanted else [],
            bridge=[
                brief_bridge_out(b) if brief else bridge_out(b, self.system.now()) for b in result.bridges
            ],
        )
        every = [*lists.core, *lists.peripheral, *lists.bridge]
        return RecallResult(
            query=result.query,
            detail=detail,
            total_results=len(every),
            memories=lists,
            degraded=result.degraded,
            message=recall_message(result.query, every),
        )

    def store_session_lesson(
        self,
        lesson_content: str,
        lesson_type: str = "discovery",
        session_context: str | None = None,
        importance: str = "medium",
        *,
        project: str | None = None,
    ) -> LessonResult:
        """Record a lesson of this session in the project, tagged for the session-lesson boost.
        ``lesson_type`` and ``importance`` are keys of LESSON_PLACEMENT and IMPORTANCE_SCORES."""
        level, kind = LESSON_PLACEMENT[lesson_type]
        metadata: dict[str, Any] = {
            "loader_type": "session_lesson",
            "lesson_type": lesson_type,
            "session_id": self.session_id,
            "importance_level": importance,
        }
        if session_context and session_context.strip():
            metadata["session_context"] = session_context.strip()
        outcome = self.system.store(
            lesson_content,
            hierarchy_level=level,
            memory_type=kind,
            importance_score=IMPORTANCE_SCORES[importance],
            tags=("session-lesson", lesson_type),
            metadata=metadata,
            session_id=self.session_id,
            project=self.scope(project),
        )
        return LessonResult(
            lesson_id=outcome.memory.id,
            lesson_type=lesson_type,
            importance_level=importance,
            session_id=self.session_id,
            hierarchy_level=level,
            memory_type=kind,
            stored_at=outcome.memory.timestamp.isoformat(),
            queued=outcome.queued,
            project=outcome.memory.project,
            duplicate=outcome.duplicate,
            message="This lesson was already recorded"
            if outcome.duplicate
            else "Session lesson recorded for future reference",
            suggestion=LESSON_SUGGESTIONS[lesson_type],
        )

    def delete_memories(self, memory_ids: Sequence[str]) -> DeleteResult:
        """Forget these memories everywhere (SQLite, lexical index, links, vector index)."""
        deleted = self.system.delete(memory_ids)
        return DeleteResult(
            deleted=deleted, missing=[i for i in dict.fromkeys(memory_ids) if i not in deleted]
        )

    def forget_memories(self, memory_ids: Sequence[str]) -> ForgetResult:
        """Move memories stored by hand or by an assistant to the trash. Loaded memories are kept,
        with the reason: their file or repository is their source, and the next load would disagree."""
        ids = list(dict.fromkeys(memory_ids))
        found = {memory.id: memory for memory in self.system.memories.get(ids)}
        kept = [KeptOut(id=i, reason=loaded_reason(found[i])) for i in ids if is_loaded(found.get(i))]
        held = {k.id for k in kept}
        forgotten = trash(self.system, [i for i in found if i not in held], "forgotten", self.session_id)
        missing = [i for i in ids if i not in found]
        message = f"Forgot {len(forgotten)} of {len(ids)} memories"
        return ForgetResult(forgotten=forgotten, missing=missing, kept=kept, message=message)

    def trash_list(self, limit: int = 1000) -> TrashListResult:
        """The forgotten and pruned memories still restorable, the latest first."""
        return forgetting.list_trash(self.system, limit)

    def trash_restore(self, memory_ids: Sequence[str], entries: Sequence[int] = ()) -> RestoreResult:
        """Bring trashed memories back whole (id, fields, links, versions), indexed again: the newest
        entry of each id, and the entries named by number."""
        return forgetting.restore(self.system, memory_ids, entries)

    def trash_empty(self, older_than_days: float | None = None) -> EmptyTrashResult:
        """Delete trashed memories for good (only those trashed more than N days ago, if given)."""
        return forgetting.empty_trash(self.system, older_than_days)

    def prune_memories(
        self, request: PruneRequest, dry_run: bool = True, confirm: str | None = None
    ) -> PruneResult:
        """List what ``request`` matches with a confirm token, or (not ``dry_run``) trash it."""
        return forgetting.prune(self.system, request, dry_run, confirm, self.session_id)

    def link_memories(
        self, from_id: str, to_id: str, relation: RelationName, note: str | None = None
    ) -> LinkResult:
        """Link ``from_id`` -[relation]-> ``to_id``; linking again leaves the link as it was."""
        created = self.system.link(from_id, to_id, relation, note=note, session_id=self.session_id)
        link = f"{from_id} {relation} {to_id}"
        message = f"Linked: {link}" if created else f"Already linked: {link} (unchanged)"
        return LinkResult(
            from_id=from_id,
            to_id=to_id,
            relation=relation,
            note=check_note(note),
            created=created,
            message=message,
        )

    def unlink_memories(self, from_id: str, to_id: str, relation: RelationName | None = None) -> UnlinkResult:
        """Remove the links from ``from_id`` to ``to_id`` (of ``relation`` only, if given)."""
        removed = cast("list[RelationName]", self.system.unlink(from_id, to_id, relation))
        message = (
            f"Removed {len(removed)} link(s) from {from_id} to {to_id}"
            if removed
            else f"No {relation or 'link'} from {from_id} to {to_id}: nothing to remove"
        )
        return UnlinkResult(from_id=from_id, to_id=to_id, removed=removed, message=message)

    def related_memories(
        self, memory_id: str, depth: int = 1, relations: Sequence[RelationName] = ()
    ) -> RelatedResult:
        """The memories linked to ``memory_id`` within ``depth`` links (both directions), nearest
        first, each with the relation, direction and path that reached it."""
        found = self.system.related(memory_id, depth, relations)
        ids = [neighbour.memory_id for neighbour in found.found]
        content = {memory.id: memory.content for memory in self.system.memories.get(ids)}
        related = [related_out(n, content[n.memory_id]) for n in found.found if n.memory_id in content]
        more = " (more are linked: narrow the relations or the depth)" if found.truncated else ""
        return RelatedResult(
            memory_id=memory_id,
            depth=depth,
            relations=list(dict.fromkeys(relations)),
            related=related,
            truncated=found.truncated,
            message=f"{len(related)} memories linked to {memory_id} within {depth} link(s){more}",
        )

    def get_memories(self, memory_ids: Sequence[str], include_history: bool = False) -> GetResult:
        """The memories with these ids, whole, in the order asked (ids not found are ``missing``);
        with ``include_history`` each carries its earlier versions, oldest first. Opening a memory
        counts as a use (its strength rises)."""
        ids = list(dict.fromkeys(memory_ids))
        found, now = self.system.open(ids), self.system.now()
        history = self.system.memories.versions([m.id for m in found]) if include_history else None
        records = [record_out(m, history.get(m.id, []) if history is not None else None, now) for m in found]
        missing = [i for i in ids if i not in {m.id for m in found}]
        trashed = [row.id for row in self.system.memories.trash.find(missing)]
        in_trash = f"; {len(trashed)} in the trash (memory_system trash restore ID)" if trashed else ""
        message = f"Found {len(found)} of {len(ids)} memories{in_trash}"
        return GetResult(memories=records, missing=missing, in_trash=trashed, message=message)

    def list_memories(
        self,
        filters: RecallFilters | None = None,
        order_by: str = "created",
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
        *,
        project: str | None = None,
    ) -> ListResult:
        """A page of the memories of the project and the global ones (as recall scopes them),
        highest ``order_by`` first; ``cursor`` (a page's ``next_cursor``) continues after that page."""
        order = checked_order(order_by)
        where = scope_filter(filters, self.scope(project))
        after = decode_cursor(cursor, order) if cursor is not None else None
        page = self.system.memories.list_memories(where, order, checked_size(limit), after)
        return ListResult(
            order_by=order,
            total=page.total,
            memories=[memory_out(m, self.system.now()) for m in page.memories],
            next_cursor=encode_cursor(order, page.next_key) if page.next_key else None,
            message=f"{len(page.memories)} of {page.total} memories, {_ORDER_NAMES[order]}"
            if page.total
            else "No memories match",
        )

    def update_memory(
        self, memory_id: str, changes: MemoryChanges, *, expected_revision: str | None = None
    ) -> UpdateResult:
        """Change a memory in place (id, access history and links stay; the previous state becomes a
        version). Loaded memories are refused with the way to change them: their file. With
        ``expected_revision`` (``CognitiveMemory.revision`` as read) a memory changed since is
        refused with ``EditConflictError`` and nothing is written."""
        found = self.system.memories.get([memory_id])
        if found and is_loaded(found[0]):
            raise LoadedMemoryError(f"Memory {memory_id} is {loaded_reason(found[0])}.")
        edit = MemoryEdit(
            text=changes.text,
            tags=changes.tags,
            importance_score=changes.importance_score,
            hierarchy_level=changes.hierarchy_level,
            memory_type=changes.memory_type,
            metadata={"source_info": changes.source_info} if changes.source_info is not None else None,
        )
        outcome = self.system.update(
            memory_id, edit, session_id=self.session_id, expected_revision=expected_revision
        )
        memory = outcome.memory
        changed = ["text" if name == "content" else name for name in outcome.changed]
        return UpdateResult(
            memory_id=memory.id,
            changed=changed,
            version=outcome.version,
            reembedded="content" in outcome.changed,
            queued=outcome.queued,
            memory=memory_out(memory, self.system.now()),
            message=f"Updated {', '.join(changed)}; the previous state is version {outcome.version}"
            if changed
            else "Nothing changed: the memory already holds these values",
        )

    def rebuild_index(self) -> int:
        """Rewrite the vector index from the vectors in SQLite; returns the number written."""
        return self.system.rebuild_index()

    def load_markdown(
        self, path: str, on_progress: Callable[[int, int], None] | None = None, *, project: str | None = None
    ) -> LoadResult:
        """Load a markdown file or tree incrementally into the project; ``on_progress(done, total)``
        counts kilobytes of markdown stored."""
        report = load_markdown(self.system, Path(path), on_progress=on_progress, project=self.scope(project))
        return load_out(report)

    def watch_markdown(
        self,
        path: str,
        on_load: Callable[[LoadResult], None],
        on_batch: Callable[[WatchResult], None],
        stop: threading.Event | None = None,
        *,
        project: str | None = None,
    ) -> None:
        """Load ``path``, then follow its changes until ``stop`` is set or the process is interrupted."""
        watch_markdown(
            self.system,
            Path(path),
            on_load=lambda report: on_load(load_out(report)),
            on_batch=lambda batch: on_batch(
                WatchResult(
                    changed=list(batch.changed),
                    removed=list(batch.removed),
                    chunks=chunks_out(batch.chunks),
                    skipped=[SkippedOut(path=item.path, reason=item.reason) for item in batch.skipped],
                )
            ),
            stop=stop,
            project=self.scope(project),
        )

    def remove_file(self, path: str) -> RemoveResult:
        """Forget the memories of a loaded markdown file (or of every loaded file under a directory)."""
        files, memories = remove_markdown(self.system, Path(path))
        return RemoveResult(path=path, files_removed=files, memories_removed=memories)

    def show_status(self, detailed: bool = False) -> StatusResult:
        """Counts, storage, recent activity and configuration (paths and internals if detailed)."""
        return status_out(self.system.status(), detailed, self.session_id, self.system.memories.meta)

    def load_git_history(
        self,
        repo: str | Path,
        on_progress: Callable[[int, int], None] | None = None,
        *,
        project: str | None = None,
    ) -> GitLoadResult:
        """Load or bring up to date the co-change, hotspot and solution patterns of a repository.
        ``on_progress(done, total)`` follows the commits read."""
        report = load_git(self.system, Path(repo), on_progress=on_progress, project=self.scope(project))
        return git_load_out(report)


def _rounded(value: float | None) -> float | None:
    return round(value, 4) if value is not None else None


def _store_message(outcome: StoreOutcome) -> str:
    if outcome.duplicate:
        return "Already remembered: the same text is stored in this project (its access was refreshed)."
    if outcome.similar:
        return (
            "Experience stored successfully. Similar memories exist: if this one corrects or extends "
            "one of them, update_memory (memory_system update) on that id keeps one memory instead of two."
        )
    return "Experience stored successfully"
