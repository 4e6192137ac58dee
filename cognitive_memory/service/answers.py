"""Boundary models from core values: what the facade answers with."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, cast

from cognitive_memory.core.memory import BridgeMemory, CognitiveMemory
from cognitive_memory.core.sources import SyncCounts
from cognitive_memory.core.strength import memory_strength
from cognitive_memory.loaders import GitLoadReport, LoadReport
from cognitive_memory.outcomes import SystemStatus
from cognitive_memory.retrieval import RankedMemory, ScoreBreakdown
from cognitive_memory.retrieval.floor import RelevanceFloor
from cognitive_memory.service.consolidation import last_consolidation_out
from cognitive_memory.service.formatting import format_source_info
from cognitive_memory.service.schemas import (
    BridgeOut,
    BriefMemoryOut,
    ChunkCountsOut,
    GitLoadResult,
    LoadResult,
    MemoryCountsOut,
    MemoryOut,
    MemoryRecordOut,
    RelatedOut,
    RelationName,
    ScoreOut,
    SkippedOut,
    StatusResult,
    StorageStatsOut,
    VersionOut,
)
from cognitive_memory.storage.browse import VersionRow
from cognitive_memory.storage.relations import Neighbour

__all__ = [
    "BRIEF_CONTENT_CHARS",
    "memory_out",
    "bridge_out",
    "brief_bridge_out",
    "brief_content",
    "brief_ranked_out",
    "ranked_reason",
    "recall_message",
    "chunks_out",
    "git_load_out",
    "iso",
    "load_out",
    "memory_fields",
    "ranked_out",
    "related_out",
    "record_out",
    "status_out",
    "version_out",
]

MB = 1024 * 1024
# Characters of a linked memory shown in a related_memories answer.
RELATED_PREVIEW = 200
# Characters of a memory a brief recall answer holds: a loaded markdown section is at most about
# this long (the loader's MAX_CHUNK_CHARS), so only long hand-stored texts are cut.
BRIEF_CONTENT_CHARS = 1500
# The cosine from which a brief answer says "meaning" found a memory (a typical on-topic match
# of MiniLM is 0.4 and above; off-topic text stays below 0.3).
MEANING_SIMILARITY = 0.3
# The activation from other results from which a brief answer says "linked": the relevance
# floor's own threshold for letting a memory in through its links.
LINKED_ACTIVATION = RelevanceFloor().activation


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def chunks_out(counts: SyncCounts) -> ChunkCountsOut:
    return ChunkCountsOut(
        added=counts.added, updated=counts.updated, removed=counts.removed, unchanged=counts.unchanged
    )


def load_out(report: LoadReport) -> LoadResult:
    return LoadResult(
        root=report.root,
        files=report.files,
        files_loaded=report.files_loaded,
        files_unchanged=report.files_unchanged,
        files_removed=report.files_removed,
        chunks=chunks_out(report.chunks),
        skipped=[SkippedOut(path=item.path, reason=item.reason) for item in report.skipped],
        seconds=round(report.seconds, 3),
        model_load_seconds=round(report.model_seconds, 3),
        memories_per_second=round(report.memories_per_second, 1),
    )


def memory_fields(memory: CognitiveMemory, now: datetime | None = None) -> dict[str, Any]:
    """The fields of a whole memory; ``strength`` is computed at ``now`` (default: the wall clock)
    from its uses, last use and level (core/strength.py)."""
    return {
        "id": memory.id,
        "content": memory.content,
        "hierarchy_level": int(memory.hierarchy_level),
        "memory_type": memory.memory_type.value,
        "strength": memory_strength(memory, now or datetime.now(UTC)),
        "importance_score": memory.importance_score,
        "source_info": format_source_info(memory.metadata),
        "created_date": memory.created_date.isoformat(),
        "source_date": iso(memory.source_date),
        "modified_date": iso(memory.modified_date),
        "last_accessed": iso(memory.last_accessed),
        "access_count": memory.access_count,
        "tags": list(memory.tags),
        "project": memory.project,
        "metadata": dict(memory.metadata),
    }


def memory_out(memory: CognitiveMemory, now: datetime | None = None) -> MemoryOut:
    """A whole memory, without recall's scores (strength computed at ``now``)."""
    return MemoryOut(**memory_fields(memory, now))


def version_out(row: VersionRow) -> VersionOut:
    return VersionOut(
        version=row.version,
        content=row.content,
        hierarchy_level=row.hierarchy_level,
        memory_type=row.memory_type,
        importance_score=row.importance_score,
        tags=list(row.tags),
        project=row.project,
        metadata=row.metadata,
        replaced_at=datetime.fromtimestamp(row.replaced_at, UTC).isoformat(),
        replaced_by_session=row.replaced_by_session,
    )


def record_out(
    memory: CognitiveMemory, history: Sequence[VersionRow] | None, now: datetime | None = None
) -> MemoryRecordOut:
    """A whole memory with its earlier versions (None: not asked for), strength computed at ``now``."""
    versions = [version_out(row) for row in history] if history is not None else None
    return MemoryRecordOut(**memory_fields(memory, now), history=versions)


def ranked_out(ranked: RankedMemory) -> MemoryOut:
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
        words=s.words,
        evidence=s.evidence,
        linked=s.linked,
    )
    return MemoryOut(
        # The strength ranking used, computed at the time of the recall.
        **{**memory_fields(ranked.memory), "strength": s.strength},
        rank=ranked.rank,
        similarity_score=s.similarity,
        score=score,
        superseded_by=list(ranked.superseded_by),
    )


def brief_ranked_out(ranked: RankedMemory) -> BriefMemoryOut:
    """A recalled memory as ``detail: brief`` gives it: one score, the reason it was found."""
    return _brief(
        ranked.memory, round(ranked.score.total, 3), ranked_reason(ranked.score), list(ranked.superseded_by)
    )


def brief_bridge_out(bridge: BridgeMemory) -> BriefMemoryOut:
    """A bridge as ``detail: brief`` gives it: its bridge score, and the core memory it is close to."""
    return _brief(bridge.memory, round(bridge.bridge_score, 3), f"bridge: close to {bridge.connected_to}", [])


def _brief(memory: CognitiveMemory, score: float, reason: str, superseded_by: list[str]) -> BriefMemoryOut:
    content, truncated = brief_content(memory.content)
    return BriefMemoryOut(
        id=memory.id,
        content=content,
        truncated=True if truncated else None,
        level=int(memory.hierarchy_level),
        type=memory.memory_type.value,
        score=score,
        reason=reason,
        source=format_source_info(memory.metadata),
        date=(memory.source_date or memory.created_date).date().isoformat(),
        tags=list(memory.tags) or None,
        project=memory.project,
        superseded_by=superseded_by or None,
    )


def brief_content(text: str, limit: int = BRIEF_CONTENT_CHARS) -> tuple[str, bool]:
    """``text`` whole when it fits in ``limit`` characters, else cut at the last word boundary
    before it (mid-word only for a word longer than a fifth of the limit); True when cut."""
    if len(text) <= limit:
        return text, False
    cut = text[:limit]
    boundary = max(cut.rfind(" "), cut.rfind("\n"))
    return (cut[:boundary] if boundary > limit * 4 // 5 else cut).rstrip(), True


def recall_message(query: str, memories: Sequence[BriefMemoryOut | MemoryOut]) -> str | None:
    """What a recall answer needs said: that nothing was relevant, or that some texts were cut."""
    if not memories:
        return (
            f"No memory is relevant enough to '{query}': nothing in memory matches it. "
            "Store it if it is worth remembering, or rephrase the query."
        )
    cut = [m.id for m in memories if isinstance(m, BriefMemoryOut) and m.truncated]
    if cut:
        return (
            f"{len(cut)} memories were cut at {BRIEF_CONTENT_CHARS} characters (truncated: true); "
            "get_memories returns them whole."
        )
    return None


def ranked_reason(score: ScoreBreakdown | ScoreOut) -> str:
    """Which signals found a memory: meaning (cosine), words (share of the query's words it
    holds), linked (activation from results that passed the floor), speaker (the query names
    who said it). Also read from a full answer's ``ScoreOut`` (the dashboard's search)."""
    reasons = []
    if score.similarity >= MEANING_SIMILARITY:
        reasons.append("meaning")
    if score.words > 0:
        reasons.append(f"words ({score.words:.0%})")
    if score.linked >= LINKED_ACTIVATION:
        reasons.append("linked")
    if score.speaker > 0:
        reasons.append("speaker")
    return ", ".join(reasons) or "weak: nearest by rank only"


def related_out(neighbour: Neighbour, content: str) -> RelatedOut:
    """One memory of a ``related_memories`` answer (``content`` is cut to its first 200 characters)."""
    return RelatedOut(
        id=neighbour.memory_id,
        content=content[:RELATED_PREVIEW],
        relation=cast("RelationName", neighbour.relation),
        direction=neighbour.direction,
        depth=neighbour.depth,
        path=list(neighbour.path),
        note=neighbour.note,
    )


def bridge_out(bridge: BridgeMemory, now: datetime | None = None) -> BridgeOut:
    return BridgeOut(
        **memory_fields(bridge.memory, now),
        bridge_score=bridge.bridge_score,
        novelty_score=bridge.novelty_score,
        connection_potential=bridge.connection_potential,
        explanation=bridge.explanation,
        connected_to=bridge.connected_to,
    )


def status_out(
    status: SystemStatus, detailed: bool, session_id: str, meta: Callable[[str], str | None] | None = None
) -> StatusResult:
    """The status answer; ``meta`` reads the store's store_meta (for ``last_consolidation``)."""
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
    activity = {name: iso(status.activity.get(name)) for name in ("last_storage", "last_retrieval")}
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
            by_project=counts.by_project,
        ),
        storage_stats=storage,
        recent_activity=activity,
        configuration=configuration,
        last_consolidation=last_consolidation_out(meta) if meta is not None else None,
    )


_BASIC_CONFIGURATION: Sequence[str] = (
    "embedding_model",
    "embedding_dimensions",
    "vector_backend",
    "max_memories_per_query",
    "session_lesson_boost",
    "bridge_discovery_threshold",
)


def git_load_out(report: GitLoadReport) -> GitLoadResult:
    return GitLoadResult(
        repository=report.repository,
        name=report.name,
        head=report.head,
        commits_read=report.commits_read,
        commits_total=report.commits_total,
        full_walk=report.full_walk,
        patterns={"cochange": report.cochanges, "hotspot": report.hotspots, "solution": report.solutions},
        memories=chunks_out(report.memories),
        seconds=round(report.seconds, 3),
        model_load_seconds=round(report.model_seconds, 3),
        memories_per_second=round(report.memories_per_second, 1),
    )
