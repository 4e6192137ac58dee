"""MemoryService: the one object every transport (MCP, HTTP, dashboard, hooks, typer commands)
holds. Each method takes a typed request, calls one use case of this package and returns its
typed result; the use cases own their requests, results and text. Memory ids given to it may be
short (``ids.py``): each method resolves them before its use case runs."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

from cognitive_memory.core.memory import DEFAULT_PROJECT
from cognitive_memory.core.validation import ALL_PROJECTS
from cognitive_memory.service import (
    browse,
    consolidate,
    lifecycle,
    links,
    prune,
    recall,
    remember,
    snapshots,
    sources,
    status,
    transfer,
    trash,
)
from cognitive_memory.service.browse import GetResult, ListResult, MemoryRead
from cognitive_memory.service.consolidate import ConsolidateResult
from cognitive_memory.service.filters import RecallFilters
from cognitive_memory.service.ids import resolve_memory_id, resolve_memory_ids, resolve_trashed_ids
from cognitive_memory.service.lifecycle import DeleteResult, ForgetResult, MemoryChanges, UpdateResult
from cognitive_memory.service.links import LinkResult, RelatedResult, RelationName, UnlinkResult
from cognitive_memory.service.paging import DEFAULT_PAGE_SIZE
from cognitive_memory.service.prune import PruneRequest, PruneResult
from cognitive_memory.service.recall import Detail, RecallResult
from cognitive_memory.service.remember import LessonResult, StoreContext, StoreResult
from cognitive_memory.service.snapshots import SnapshotResult
from cognitive_memory.service.sources import (
    GitLoadResult,
    LoadedSourceOut,
    LoadResult,
    RemoveResult,
    WatchResult,
)
from cognitive_memory.service.status import EncoderOut, StatusResult
from cognitive_memory.service.transfer import ImportReport
from cognitive_memory.service.trash import EmptyTrashResult, RestoreResult, TrashListResult, UndoResult
from cognitive_memory.system import CognitiveSystem

__all__ = ["MemoryService"]

Progress = Callable[[int, int], None]


class MemoryService:
    """Store, recall, browse, change, link, forget and load memories; answers are boundary models."""

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

    def session(self, session: str | None = None) -> str:
        """The session a call belongs to: the transport's (an HTTP session), else this service's."""
        return session or self.session_id

    # --- remember ---------------------------------------------------------------------------

    def store_experience(
        self,
        text: str,
        context: StoreContext | None = None,
        *,
        project: str | None = None,
        session: str | None = None,
        dry_run: bool = False,
    ) -> StoreResult:
        """Store ``text`` in the project (``context.project``, else ``project``, else the process's)
        and the session (``context.session``, else ``session``, else this service's). The same
        text already there is not stored again: the answer names it as a duplicate; a
        ``context.key`` already held updates its memory. ``dry_run`` stores nothing."""
        return remember.store(
            self.system, text, context, self.scope(project), self.session(session), dry_run=dry_run
        )

    def store_session_lesson(
        self,
        lesson_content: str,
        lesson_type: str = "discovery",
        session_context: str | None = None,
        importance: str = "medium",
        *,
        project: str | None = None,
        session: str | None = None,
    ) -> LessonResult:
        """Record a lesson of this session (``session``, else this service's) in the project,
        tagged for the session-lesson boost."""
        return remember.store_lesson(
            self.system,
            lesson_content,
            lesson_type,
            session_context,
            importance,
            project=self.scope(project),
            session_id=self.session(session),
        )

    # --- recall and browse ------------------------------------------------------------------

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
        session: str | None = None,
        explain: Sequence[str] = (),
    ) -> RecallResult:
        """Core and peripheral memories (rank order) and bridges of the project and the global
        memories, at most ``max_results`` of them all (bridges take what the ranked ones leave);
        ``filters`` keeps only matching memories. ``detail`` brief gives each memory's text (cut at
        BRIEF_CONTENT_CHARS), one score and the reason it was found; full gives whole records.
        ``explain``: ids (at most MAX_EXPLAIN) of memories to say why they ranked where they did,
        returned or not."""
        return recall.recall(
            self.system,
            query,
            types,
            max_results,
            include_bridges,
            filters,
            project=self.scope(project),
            detail=detail,
            session=self.session(session),
            explain=explain,
        )

    def get_memories(
        self,
        memory_ids: Sequence[str],
        include_history: bool = False,
        keys: Sequence[str] = (),
        *,
        project: str | None = None,
    ) -> GetResult:
        """The memories with these ids, then those holding these keys in the project (else among
        the global memories), whole, in the order asked; opening one counts as a use."""
        ids = resolve_memory_ids(self.system, memory_ids)
        return browse.get(self.system, ids, include_history, keys, self.scope(project))

    def read_memory(self, memory_id: str) -> MemoryRead | None:
        """A memory whole with its versions and revision, without counting it as a use (None: no
        memory has that id)."""
        return browse.read(self.system, resolve_memory_id(self.system, memory_id))

    def list_memories(
        self,
        filters: RecallFilters | None = None,
        order_by: str = "created",
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
        *,
        project: str | None = None,
        session: str | None = None,
        text: str | None = None,
        overview: bool = False,
    ) -> ListResult:
        """A page of the memories of the project and the global ones (as recall scopes them),
        highest ``order_by`` first; ``cursor`` (a page's ``next_cursor``) continues after that page.
        ``text``: only memories holding each of its words (typo tolerant, exact matches first).
        ``overview``: also the tags in use and the sessions of every matching memory, with counts."""
        return browse.list_page(
            self.system,
            filters,
            order_by,
            limit,
            cursor,
            project=self.scope(project),
            session=self.session(session),
            text=text,
            overview=overview,
        )

    # --- lifecycle --------------------------------------------------------------------------

    def update_memory(
        self, memory_id: str, changes: MemoryChanges, *, expected_revision: str | None = None
    ) -> UpdateResult:
        """Change a memory in place (the previous state becomes a version). With
        ``expected_revision`` (``CognitiveMemory.revision`` as read) a memory changed since is
        refused with ``EditConflictError`` and nothing is written."""
        return lifecycle.update(
            self.system,
            resolve_memory_id(self.system, memory_id),
            changes,
            session_id=self.session_id,
            expected_revision=expected_revision,
        )

    def forget_memories(
        self, memory_ids: Sequence[str], keys: Sequence[str] = (), *, project: str | None = None
    ) -> ForgetResult:
        """Move memories stored by hand or by an assistant to the trash (loaded ones are kept):
        those with these ids, and those holding these keys in the project (else among the global
        memories)."""
        ids = resolve_memory_ids(self.system, memory_ids)
        return lifecycle.forget(self.system, ids, self.session_id, keys, self.scope(project))

    def delete_memories(self, memory_ids: Sequence[str]) -> DeleteResult:
        """Forget these memories everywhere (SQLite, lexical index, links, vector index)."""
        return lifecycle.delete(self.system, resolve_memory_ids(self.system, memory_ids))

    def prune_memories(
        self, request: PruneRequest, dry_run: bool = True, confirm: str | None = None
    ) -> PruneResult:
        """List what ``request`` matches with a confirm token, or (not ``dry_run``) trash it."""
        return prune.prune(self.system, request, dry_run, confirm, self.session_id)

    def consolidate(
        self,
        threshold: float | None = None,
        project: str | None = None,
        *,
        apply: bool = False,
        advance: Progress | None = None,
    ) -> ConsolidateResult:
        """Plan (and with ``apply`` carry out) merging near duplicates, in ``project`` or in all."""
        return consolidate.consolidate(
            self.system, threshold, project, self.session_id, apply=apply, advance=advance
        )

    # --- trash ------------------------------------------------------------------------------

    def trash_list(self, limit: int = 1000, *, project: str | None = None) -> TrashListResult:
        """The forgotten and pruned memories still restorable, the latest first: of every project,
        or of ``project`` and the global memories."""
        return trash.list_trash(self.system, limit, project or ALL_PROJECTS)

    def undo(self, memory_ids: Sequence[str] = (), *, project: str | None = None) -> UndoResult:
        """Without ids, the trash of the project and the global memories (``'*'``: of every
        project), newest first, brief; with ids, restore them (restore_memories), whatever their
        project."""
        return trash.undo(self.system, resolve_trashed_ids(self.system, memory_ids), self.scope(project))

    def trash_restore(self, memory_ids: Sequence[str], entries: Sequence[int] = ()) -> RestoreResult:
        """Bring trashed memories back whole (id, fields, links, versions), indexed again: the newest
        entry of each id, and the entries named by number."""
        return trash.restore(self.system, resolve_trashed_ids(self.system, memory_ids), entries)

    def trash_empty(self, older_than_days: float | None = None) -> EmptyTrashResult:
        """Delete trashed memories for good (only those trashed more than N days ago, if given)."""
        return trash.empty_trash(self.system, older_than_days)

    def in_trash(self, memory_ids: Sequence[str]) -> list[str]:
        """Those of ``memory_ids`` the trash holds."""
        return trash.trashed_ids(self.system, resolve_trashed_ids(self.system, memory_ids))

    # --- links ------------------------------------------------------------------------------

    def link_memories(
        self,
        from_id: str,
        to_id: str,
        relation: RelationName,
        note: str | None = None,
        weight: float | None = None,
    ) -> LinkResult:
        """Link ``from_id`` -[relation]-> ``to_id`` of ``weight`` (None: the default); linking
        again leaves the link as it was, but for another ``weight`` given."""
        source, target = resolve_memory_ids(self.system, (from_id, to_id))
        return links.link(self.system, source, target, relation, note, self.session_id, weight)

    def unlink_memories(self, from_id: str, to_id: str, relation: RelationName | None = None) -> UnlinkResult:
        """Remove the links from ``from_id`` to ``to_id`` (of ``relation`` only, if given)."""
        source, target = resolve_memory_ids(self.system, (from_id, to_id))
        return links.unlink(self.system, source, target, relation)

    def related_memories(
        self, memory_id: str, depth: int = 1, relations: Sequence[RelationName] = ()
    ) -> RelatedResult:
        """The memories linked to ``memory_id`` within ``depth`` links (both directions), nearest first."""
        return links.related(self.system, resolve_memory_id(self.system, memory_id), depth, relations)

    # --- snapshots --------------------------------------------------------------------------

    def snapshot_memories(self, name: str | None = None, *, list_them: bool = False) -> SnapshotResult:
        """Snapshot the database (named ``name``, if given) into the backups folder, or with
        ``list_them`` list the snapshots there; each with the command that restores it."""
        return snapshots.run(self.system.backups, name, list_them)

    # --- sources ----------------------------------------------------------------------------

    def load_markdown(
        self, path: str, on_progress: Progress | None = None, *, project: str | None = None
    ) -> LoadResult:
        """Load a markdown file or tree incrementally into the project; ``on_progress(done, total)``
        counts kilobytes of markdown stored."""
        return sources.load_notes(self.system, path, on_progress, self.scope(project))

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
        sources.watch_notes(self.system, path, on_load, on_batch, stop, self.scope(project))

    def remove_file(self, path: str) -> RemoveResult:
        """Forget the memories of a loaded markdown file (or of every loaded file under a directory)."""
        return sources.remove_file(self.system, path)

    def load_git_history(
        self, repo: str | Path, on_progress: Progress | None = None, *, project: str | None = None
    ) -> GitLoadResult:
        """Load or bring up to date the co-change, hotspot and solution patterns of a repository.
        ``on_progress(done, total)`` follows the commits read."""
        return sources.load_git_history(self.system, repo, on_progress, self.scope(project))

    def loaded_sources(self) -> list[LoadedSourceOut]:
        """Every loaded markdown file and git repository, the latest loaded first."""
        return sources.loaded_sources(self.system)

    # --- transfer ---------------------------------------------------------------------------

    def export_memories(
        self, project: str | None = None, with_vectors: bool = False, progress: Progress | None = None
    ) -> Iterator[str]:
        """The JSON Lines export (of ``project`` only, if given), line by line."""
        return transfer.export(self.system, project, with_vectors, progress)

    def import_memories(
        self,
        stream: BinaryIO,
        project: str | None = None,
        file_format: str = "auto",
        *,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> ImportReport:
        """Import an export or an official MCP memory.jsonl (``file_format`` auto, cognitive or
        official-memory); the official format's memories go to this process's project."""
        return transfer.import_stream(
            self.system,
            stream,
            project,
            default_project=self.scope(),
            file_format=file_format,
            dry_run=dry_run,
            session_id=self.session_id,
            progress=progress,
        )

    # --- status -----------------------------------------------------------------------------

    def show_status(self, detailed: bool = False, *, session: str | None = None) -> StatusResult:
        """Counts, storage, recent activity and configuration (paths and internals if detailed),
        and the call's session."""
        return status.status(self.system, detailed, self.session(session))

    def encoder_state(self) -> EncoderOut:
        """The embedding model's name, and whether it is loaded."""
        return status.encoder_state(self.system)

    def warm_up(self) -> None:
        """Start loading the embedding model in the background, unless it is loaded."""
        if not self.system.encoder.is_ready:
            self.system.warm_up_in_background()

    def open_index(self) -> None:
        """Open the vector index in the background (see ``CognitiveSystem.open_index_in_background``)."""
        self.system.open_index_in_background()

    def rebuild_index(self) -> int:
        """Rewrite the vector index from the vectors in SQLite; returns the number written."""
        return self.system.rebuild_index()
