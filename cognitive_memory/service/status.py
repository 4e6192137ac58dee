"""Status: counts, storage, recent activity and configuration (memory_status, `memory_system
status`, the dashboard's status page), and the encoder's state; answers and their text."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from cognitive_memory.outcomes import SystemStatus
from cognitive_memory.service.consolidate import LastConsolidationOut, last_consolidation_out
from cognitive_memory.service.records import iso
from cognitive_memory.system import CognitiveSystem

__all__ = [
    "EncoderOut",
    "MemoryCountsOut",
    "StatusResult",
    "StorageStatsOut",
    "encoder_state",
    "format_status",
    "status",
]

MB = 1024 * 1024

_BASIC_CONFIGURATION: Sequence[str] = (
    "embedding_model",
    "embedding_dimensions",
    "vector_backend",
    "max_memories_per_query",
    "session_lesson_boost",
    "bridge_discovery_threshold",
)


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
    vector_count: int | None = None
    storage_size_mb: float
    database_path: str
    database_size_mb: float
    pending_vector_writes: int


class StatusResult(BaseModel):
    success: bool = True
    system_status: Literal["healthy", "degraded"]
    problem: str | None = Field(default=None, description="Why the status is degraded (absent: healthy).")
    session: str = Field(description="This session's id (filters.session 'current').")
    memory_counts: MemoryCountsOut
    storage_stats: StorageStatsOut
    recent_activity: dict[str, str | None]
    configuration: dict[str, Any]
    last_consolidation: LastConsolidationOut | None = Field(
        default=None, description="The last `memory_system consolidate --apply` (null: never ran)."
    )
    words_index: dict[str, int] | None = Field(
        default=None, description="While an older store's words are built into the index: done, total."
    )
    words_reweighing: dict[str, int] | None = Field(
        default=None,
        description="While every memory's words are weighed again against the store's average length "
        "(recall goes on): done, total.",
    )


class EncoderOut(BaseModel):
    """The embedding model, and whether it is loaded yet."""

    name: str
    ready: bool


def status(system: CognitiveSystem, detailed: bool, session_id: str) -> StatusResult:
    """Counts, storage, recent activity and configuration (paths and internals if detailed)."""
    return _status_out(system.status(), detailed, session_id, system.browsing.property)


def encoder_state(system: CognitiveSystem) -> EncoderOut:
    return EncoderOut(name=system.encoder.name, ready=system.encoder.is_ready)


def _status_out(
    found: SystemStatus, detailed: bool, session_id: str, meta: Callable[[str], str | None]
) -> StatusResult:
    """The status answer; ``meta`` reads the store's store_meta (for ``last_consolidation``)."""
    counts, info = found.counts, found.vector_store
    storage = StorageStatsOut(
        qdrant_backend=info.backend if info else "unknown",
        qdrant_mode=info.mode if info else "unknown",
        qdrant_status=info.status if info else f"unavailable: {found.vector_store_error}",
        qdrant_location=info.location if info else "unknown",
        vector_count=info.vector_count if info else None,
        storage_size_mb=round(info.size_bytes / MB, 2) if info else 0.0,
        database_path=found.database_path,
        database_size_mb=round(found.database_bytes / MB, 2),
        pending_vector_writes=found.pending_vector_writes,
    )
    activity = {name: iso(found.activity.get(name)) for name in ("last_storage", "last_retrieval")}
    return StatusResult(
        system_status="healthy" if found.healthy else "degraded",
        problem=found.problem,
        session=session_id,
        memory_counts=MemoryCountsOut(
            total_memories=counts.total,
            level_0_concepts=counts.by_level[0],
            level_1_contexts=counts.by_level[1],
            level_2_episodes=counts.by_level[2],
            episodic_memories=counts.by_type["episodic"],
            semantic_memories=counts.by_type["semantic"],
            session_lessons=counts.session_lessons,
            by_project=counts.by_project,
        ),
        storage_stats=storage,
        recent_activity=activity,
        configuration=_configuration(found, detailed, session_id),
        last_consolidation=last_consolidation_out(meta),
        words_index=_words_out(found.words_index),
        words_reweighing=_words_out(found.words_reweighing),
    )


def _words_out(progress: tuple[int, int] | None) -> dict[str, int] | None:
    return None if progress is None else {"done": progress[0], "total": progress[1]}


def _configuration(found: SystemStatus, detailed: bool, session_id: str) -> dict[str, Any]:
    info = found.vector_store
    configuration: dict[str, Any] = {
        key: found.configuration[key] for key in _BASIC_CONFIGURATION if key in found.configuration
    }
    configuration["embedding_model_loaded"] = found.encoder_ready
    if detailed:
        configuration |= found.configuration
        configuration["session_id"] = session_id
        configuration["process_id"] = os.getpid()
        if found.recall_state:
            configuration["recall_state"] = dict(found.recall_state)
        if info is not None:
            configuration["vector_store_details"] = dict(info.details)
    return configuration


def _words_lines(words: dict[str, int] | None, reweighing: dict[str, int] | None) -> list[str]:
    """The line of an older store's words being built into the index, and of the words being
    weighed again (none once done)."""
    lines = []
    if words is not None:
        lines.append(
            f"  Words in Index: {words['done']:,} of {words['total']:,} memories "
            "(building; recall uses SQLite)"
        )
    if reweighing is not None:
        lines.append(
            f"  Words Weighed Again: {reweighing['done']:,} of {reweighing['total']:,} memories "
            "(the store's average length moved; recall goes on)"
        )
    return lines


def format_status(result: StatusResult) -> str:
    counts, storage = result.memory_counts, result.storage_stats
    healthy = result.system_status == "healthy"
    vectors = "unknown" if storage.vector_count is None else f"{storage.vector_count:,} vectors"
    lines = [
        "📊 COGNITIVE MEMORY SYSTEM STATUS",
        "=" * 40,
        "",
        f"System Status: {'✅ HEALTHY' if healthy else '⚠️ DEGRADED'}",
        *([f"  {result.problem}"] if result.problem else []),
        f"Session: {result.session}",
        "",
        "Memory Counts:",
        f"  Total Memories: {counts.total_memories:,}",
        f"  L0 (Concepts): {counts.level_0_concepts:,} memories",
        f"  L1 (Contexts): {counts.level_1_contexts:,} memories",
        f"  L2 (Episodes): {counts.level_2_episodes:,} memories",
        f"  Episodic Memories: {counts.episodic_memories:,}",
        f"  Semantic Memories: {counts.semantic_memories:,}",
        f"  Session Lessons: {counts.session_lessons:,}",
        *(f"  Project {name}: {count:,}" for name, count in counts.by_project.items()),
        "",
        "Storage Statistics:",
        f"  Qdrant: {storage.qdrant_backend} ({storage.qdrant_mode}), status {storage.qdrant_status}",
        f"  Location: {storage.qdrant_location}",
        f"  Vector Count: {vectors}",
        f"  Index Size: {storage.storage_size_mb:.1f} MB",
        f"  Database: {storage.database_path} ({storage.database_size_mb:.1f} MB)",
        f"  Pending Vector Writes: {storage.pending_vector_writes}",
        *_words_lines(result.words_index, result.words_reweighing),
        "",
        "Recent Activity:",
    ]
    lines += [
        f"  {name.replace('_', ' ').title()}: {when or 'never'}"
        for name, when in result.recent_activity.items()
    ]
    if (last := result.last_consolidation) is not None:
        lines.append(f"  Last Consolidation: {last.at} (groups merged {last.groups}, trashed {last.trashed})")
    lines += ["", "Configuration:"]
    lines += [f"  {name.replace('_', ' ').title()}: {value}" for name, value in result.configuration.items()]
    return "\n".join(lines)
