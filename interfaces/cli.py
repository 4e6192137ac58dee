"""CognitiveCLI: the one facade over the core that MCP tools and typer commands both call."""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, get_args

from cognitive_memory.core.memory import BridgeMemory, CognitiveMemory
from cognitive_memory.core.sources import SyncCounts
from cognitive_memory.errors import InvalidInputError
from cognitive_memory.loaders import GitLoadReport, LoadReport, load_git, load_markdown, remove_markdown
from cognitive_memory.loaders.git_load import GIT_LOADER_TYPE
from cognitive_memory.loaders.notes import LOADER_TYPE as MARKDOWN_LOADER
from cognitive_memory.loaders.watch import watch_markdown
from cognitive_memory.retrieval import RankedMemory
from cognitive_memory.storage import VectorFilter
from cognitive_memory.system import CognitiveSystem, SystemStatus
from interfaces.formatting import format_source_info
from interfaces.schemas import (
    BridgeOut,
    ChunkCountsOut,
    DeleteResult,
    ForgetResult,
    GitLoadResult,
    KeptOut,
    LessonResult,
    LevelValue,
    LoadResult,
    MemoryCountsOut,
    MemoryOut,
    MemoryTypeName,
    RecallLists,
    RecallResult,
    RecallSource,
    RemoveResult,
    ScoreOut,
    SkippedOut,
    StatusResult,
    StorageStatsOut,
    StoreResult,
    WatchResult,
)

__all__ = ["IMPORTANCE_SCORES", "LESSON_PLACEMENT", "RECALL_TYPES", "CognitiveCLI"]

RECALL_TYPES = ("core", "peripheral", "bridge")
IMPORTANCE_SCORES = {"low": 0.3, "medium": 0.5, "high": 0.8, "critical": 1.0}
# lesson_type -> (hierarchy level, memory type): rules are concepts, fixes and context are
# contexts, and a discovery is an episode (something that happened in this session).
LESSON_PLACEMENT = {
    "pattern": (0, "semantic"),
    "warning": (0, "semantic"),
    "solution": (1, "semantic"),
    "context": (1, "semantic"),
    "discovery": (2, "episodic"),
}
LESSON_SUGGESTIONS = {
    "discovery": "Consider recording how this discovery changes the approach (a pattern) or what to avoid "
    "(a warning).",
    "pattern": "Consider adding a concrete case as a solution lesson so the pattern is easy to recognise.",
    "solution": "Consider noting the symptoms that led here, so a future session finds the fix from "
    "the problem.",
    "warning": "Consider adding the safe alternative as a solution lesson.",
    "context": "Consider updating this context lesson when the focus of the work changes.",
}
MB = 1024 * 1024


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


class CognitiveCLI:
    """Store, recall, record lessons and report status; answers are boundary models."""

    def __init__(self, system: CognitiveSystem, session_id: str | None = None) -> None:
        self.system = system
        self.session_id = session_id or str(uuid.uuid4())

    def store_experience(self, text: str, context: Mapping[str, Any] | None = None) -> StoreResult:
        """Store ``text``; ``context`` may give hierarchy_level, memory_type, importance_score,
        tags, source_info and metadata."""
        context = dict(context or {})
        metadata = dict(context.get("metadata") or {})
        if context.get("source_info"):
            metadata["source_info"] = context["source_info"]
        outcome = self.system.store(
            text,
            hierarchy_level=context.get("hierarchy_level"),
            memory_type=context.get("memory_type"),
            importance_score=context.get("importance_score", 0.5),
            tags=context.get("tags") or (),
            metadata=metadata,
            session_id=self.session_id,
        )
        memory = outcome.memory
        return StoreResult(
            memory_id=memory.id,
            hierarchy_level=int(memory.hierarchy_level),
            memory_type=memory.memory_type.value,
            importance_score=memory.importance_score,
            tags=list(memory.tags),
            stored_at=memory.timestamp.isoformat(),
            queued=outcome.queued,
            retry_in_seconds=self.system.retry_seconds if outcome.queued else None,
            message="Experience stored successfully",
        )

    def retrieve_memories(
        self,
        query: str,
        types: Collection[str] | None = None,
        max_results: int = 10,
        include_bridges: bool = True,
        filters: Mapping[str, Sequence[Any] | None] | None = None,
    ) -> RecallResult:
        """Core and peripheral memories (rank order, at most ``max_results``) and bridges;
        ``filters`` (tags, hierarchy_levels, memory_types, sources) keeps only matching memories."""
        wanted = set(types or RECALL_TYPES)
        unknown = wanted - set(RECALL_TYPES)
        if unknown:
            raise InvalidInputError(
                f"Unknown memory types {sorted(unknown)}; choose from {list(RECALL_TYPES)}.",
                code="invalid_value",
            )
        bridges_wanted = include_bridges and "bridge" in wanted
        result = self.system.retrieve(
            query, max_results=max_results, include_bridges=bridges_wanted, where=_recall_filter(filters)
        )
        lists = RecallLists(
            core=[_ranked_out(r) for r in result.core] if "core" in wanted else [],
            peripheral=[_ranked_out(r) for r in result.peripheral] if "peripheral" in wanted else [],
            bridge=[_bridge_out(b) for b in result.bridges],
        )
        total = len(lists.core) + len(lists.peripheral) + len(lists.bridge)
        return RecallResult(query=result.query, total_results=total, memories=lists, degraded=result.degraded)

    def store_session_lesson(
        self,
        lesson_content: str,
        lesson_type: str = "discovery",
        session_context: str | None = None,
        importance: str = "medium",
    ) -> LessonResult:
        """Record a lesson of this session, tagged for the session-lesson boost in recall."""
        if lesson_type not in LESSON_PLACEMENT:
            raise InvalidInputError(
                f"`lesson_type` is {lesson_type!r}; use one of {list(LESSON_PLACEMENT)}.",
                code="invalid_value",
            )
        if importance not in IMPORTANCE_SCORES:
            raise InvalidInputError(
                f"`importance` is {importance!r}; use one of {list(IMPORTANCE_SCORES)}.", code="invalid_value"
            )
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
            message="Session lesson recorded for future reference",
            suggestion=LESSON_SUGGESTIONS[lesson_type],
        )

    def delete_memories(self, memory_ids: Sequence[str]) -> DeleteResult:
        """Forget these memories everywhere (SQLite, lexical index, links, vector index)."""
        deleted = self.system.delete(memory_ids)
        return DeleteResult(
            deleted=deleted, missing=[i for i in dict.fromkeys(memory_ids) if i not in deleted]
        )

    def forget_memories(self, memory_ids: Sequence[str]) -> ForgetResult:
        """Forget memories stored by hand or by an assistant. Loaded memories are kept, with the
        reason: their file or repository is their source, and the next load would disagree."""
        ids = list(dict.fromkeys(memory_ids))
        found = {memory.id: memory for memory in self.system.memories.get(ids)}
        kept = [KeptOut(id=i, reason=_loaded_reason(found[i])) for i in ids if _is_loaded(found.get(i))]
        held = {k.id for k in kept}
        forgotten = self.system.delete([i for i in ids if i in found and i not in held])
        missing = [i for i in ids if i not in found]
        message = f"Forgot {len(forgotten)} of {len(ids)} memories"
        return ForgetResult(forgotten=forgotten, missing=missing, kept=kept, message=message)

    def rebuild_index(self) -> int:
        """Rewrite the vector index from the vectors in SQLite; returns the number written."""
        return self.system.rebuild_index()

    def load_markdown(self, path: str, on_progress: Callable[[int, int], None] | None = None) -> LoadResult:
        """Load a markdown file or tree incrementally; ``on_progress(done, total)`` counts files."""
        return _load_out(load_markdown(self.system, Path(path), on_progress=on_progress))

    def watch_markdown(
        self,
        path: str,
        on_load: Callable[[LoadResult], None],
        on_batch: Callable[[WatchResult], None],
        stop: threading.Event | None = None,
    ) -> None:
        """Load ``path``, then follow its changes until ``stop`` is set or the process is interrupted."""
        watch_markdown(
            self.system,
            Path(path),
            on_load=lambda report: on_load(_load_out(report)),
            on_batch=lambda batch: on_batch(
                WatchResult(
                    changed=list(batch.changed),
                    removed=list(batch.removed),
                    chunks=_chunks_out(batch.chunks),
                    skipped=[SkippedOut(path=item.path, reason=item.reason) for item in batch.skipped],
                )
            ),
            stop=stop,
        )

    def remove_file(self, path: str) -> RemoveResult:
        """Forget the memories of a loaded markdown file (or of every loaded file under a directory)."""
        files, memories = remove_markdown(self.system, Path(path))
        return RemoveResult(path=path, files_removed=files, memories_removed=memories)

    def show_status(self, detailed: bool = False) -> StatusResult:
        """Counts, storage, recent activity and configuration (paths and internals if detailed)."""
        return _status_out(self.system.status(), detailed, self.session_id)

    def load_git_history(
        self, repo: str | Path, on_progress: Callable[[int, int], None] | None = None
    ) -> GitLoadResult:
        """Load or bring up to date the co-change, hotspot and solution patterns of a repository.
        ``on_progress(done, total)`` follows the commits read."""
        return _git_load_out(load_git(self.system, Path(repo), on_progress=on_progress))


RECALL_FILTER_VALUES: Mapping[str, tuple[Any, ...]] = {
    "hierarchy_levels": get_args(LevelValue),
    "memory_types": get_args(MemoryTypeName),
    "sources": get_args(RecallSource),
}


def _recall_filter(filters: Mapping[str, Sequence[Any] | None] | None) -> VectorFilter | None:
    """The core's filter from the caller's (``sources`` are loader types); bad values refused."""
    if not filters:
        return None
    unknown = set(filters) - {*RECALL_FILTER_VALUES, "tags"}
    if unknown:
        raise InvalidInputError(f"Unknown recall filters {sorted(unknown)}.", code="unknown_field")
    for name, allowed in RECALL_FILTER_VALUES.items():
        wrong = [value for value in filters.get(name) or () if value not in allowed]
        if wrong:
            raise InvalidInputError(
                f"Recall filter `{name}` accepts {list(allowed)}, not {wrong}.", code="invalid_value"
            )
    where = VectorFilter(
        hierarchy_levels=tuple(filters.get("hierarchy_levels") or ()),
        memory_types=tuple(filters.get("memory_types") or ()),
        loader_types=tuple(filters.get("sources") or ()),
        tags=tuple(str(tag) for tag in filters.get("tags") or ()),
    )
    return where if where.conditions() else None


def _is_loaded(memory: CognitiveMemory | None) -> bool:
    return memory is not None and memory.loader_type in (MARKDOWN_LOADER, GIT_LOADER_TYPE)


def _loaded_reason(memory: CognitiveMemory) -> str:
    if memory.loader_type == MARKDOWN_LOADER:
        path = memory.metadata.get("source_path", "its file")
        return (
            f"loaded from {path}: edit the file and load it again, or run `memory_system remove-file {path}`"
        )
    repository = memory.metadata.get("repository_path", "its repository")
    return f"a pattern of {repository}'s history: `memory_system git-load` keeps it in step with the history"


def _chunks_out(counts: SyncCounts) -> ChunkCountsOut:
    return ChunkCountsOut(
        added=counts.added, updated=counts.updated, removed=counts.removed, unchanged=counts.unchanged
    )


def _load_out(report: LoadReport) -> LoadResult:
    return LoadResult(
        root=report.root,
        files=report.files,
        files_loaded=report.files_loaded,
        files_unchanged=report.files_unchanged,
        files_removed=report.files_removed,
        chunks=_chunks_out(report.chunks),
        skipped=[SkippedOut(path=item.path, reason=item.reason) for item in report.skipped],
        seconds=round(report.seconds, 3),
        model_load_seconds=round(report.model_seconds, 3),
        memories_per_second=round(report.memories_per_second, 1),
    )


def _memory_fields(memory: CognitiveMemory) -> dict[str, Any]:
    return {
        "id": memory.id,
        "content": memory.content,
        "hierarchy_level": int(memory.hierarchy_level),
        "memory_type": memory.memory_type.value,
        "strength": memory.strength,
        "importance_score": memory.importance_score,
        "source_info": format_source_info(memory.metadata),
        "created_date": memory.created_date.isoformat(),
        "source_date": _iso(memory.source_date),
        "modified_date": _iso(memory.modified_date),
        "last_accessed": _iso(memory.last_accessed),
        "access_count": memory.access_count,
        "tags": list(memory.tags),
        "metadata": dict(memory.metadata),
    }


def _ranked_out(ranked: RankedMemory) -> MemoryOut:
    s = ranked.score
    score = ScoreOut(
        similarity=s.similarity,
        semantic=s.semantic,
        lexical=s.lexical,
        relevance=s.relevance,
        activation=s.activation,
        speaker=s.speaker,
        importance=s.importance,
        recency=s.recency,
        strength=s.strength,
        lesson_boost=s.lesson_boost,
        total=s.total,
    )
    return MemoryOut(
        **_memory_fields(ranked.memory), rank=ranked.rank, similarity_score=s.similarity, score=score
    )


def _bridge_out(bridge: BridgeMemory) -> BridgeOut:
    return BridgeOut(
        **_memory_fields(bridge.memory),
        bridge_score=bridge.bridge_score,
        novelty_score=bridge.novelty_score,
        connection_potential=bridge.connection_potential,
        explanation=bridge.explanation,
        connected_to=bridge.connected_to,
    )


def _status_out(status: SystemStatus, detailed: bool, session_id: str) -> StatusResult:
    counts, info = status.counts, status.vector_store
    storage = StorageStatsOut(
        qdrant_backend=info.backend if info else "unknown",
        qdrant_mode=info.mode if info else "unknown",
        qdrant_status=info.status if info else f"unavailable: {status.vector_store_error}",
        qdrant_location=info.location if info else "unknown",
        vector_count=info.vector_count if info else None,
        storage_size_mb=round(info.size_bytes / MB, 2) if info else 0.0,
        database_path=str(status.database_path),
        database_size_mb=round(status.database_bytes / MB, 2),
        pending_vector_writes=status.pending_vector_writes,
    )
    activity = {name: _iso(status.activity.get(name)) for name in ("last_storage", "last_retrieval")}
    configuration: dict[str, Any] = {
        key: status.configuration[key] for key in _BASIC_CONFIGURATION if key in status.configuration
    }
    configuration["embedding_model_loaded"] = status.encoder_ready
    if detailed:
        configuration |= status.configuration
        configuration["session_id"] = session_id
        configuration["process_id"] = os.getpid()
        if info is not None:
            configuration["vector_store_details"] = dict(info.details)
    return StatusResult(
        system_status="healthy" if status.healthy else "degraded",
        memory_counts=MemoryCountsOut(
            total_memories=counts.total,
            level_0_concepts=counts.by_level[0],
            level_1_contexts=counts.by_level[1],
            level_2_episodes=counts.by_level[2],
            episodic_memories=counts.by_type["episodic"],
            semantic_memories=counts.by_type["semantic"],
            session_lessons=counts.session_lessons,
        ),
        storage_stats=storage,
        recent_activity=activity,
        configuration=configuration,
    )


_BASIC_CONFIGURATION: Sequence[str] = (
    "embedding_model",
    "embedding_dimensions",
    "vector_backend",
    "max_memories_per_query",
    "session_lesson_boost",
    "bridge_discovery_threshold",
)


def _git_load_out(report: GitLoadReport) -> GitLoadResult:
    return GitLoadResult(
        repository=report.repository,
        name=report.name,
        head=report.head,
        commits_read=report.commits_read,
        commits_total=report.commits_total,
        full_walk=report.full_walk,
        patterns={"cochange": report.cochanges, "hotspot": report.hotspots, "solution": report.solutions},
        memories=_chunks_out(report.memories),
        seconds=round(report.seconds, 3),
        model_load_seconds=round(report.model_seconds, 3),
        memories_per_second=round(report.memories_per_second, 1),
    )
