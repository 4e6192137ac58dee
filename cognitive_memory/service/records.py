"""What every answer shares: the memory record as it leaves the service (``MemoryOut``, with the
``ScoreOut`` recall gives it), the error answer, and how a record is shown to people."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import PurePath
from typing import Any

from pydantic import BaseModel, Field

from cognitive_memory.core.memory import CognitiveMemory, SourceKind
from cognitive_memory.core.strength import memory_strength

__all__ = [
    "LEVEL_NAMES",
    "MANUAL_SOURCE",
    "ErrorResult",
    "MemoryOut",
    "ScoreOut",
    "format_source_info",
    "iso",
    "memories",
    "memory_fields",
    "memory_out",
    "preview",
]

LEVEL_NAMES = {0: "Concept", 1: "Context", 2: "Episode"}
PREVIEW_CHARS = 240
# The source shown for a memory stored by hand without a source_info.
MANUAL_SOURCE = "💭 Manual Entry"


class ScoreOut(BaseModel):
    """Why a memory ranked where it did.

    total = (relevance + activation + speaker) x lesson_boost + weighted terms. similarity is the
    cosine to the query; semantic and lexical are the normalised meaning and word (BM25) scores,
    fused into relevance; activation spread to it from related candidates; speaker is the boost it
    got because the query names who said it (the speaker recorded for a conversation turn). words
    (rarity-weighted share of the query's words it holds), evidence (similarity + 0.5 x words) and
    linked (activation from memories that passed on their own) are what the relevance floor read.
    key (given only then) is what the memory gained because the query is its key: it ranks first.
    """

    similarity: float
    semantic: float
    lexical: float
    relevance: float
    activation: float
    speaker: float
    importance: float
    recency: float
    strength: float
    lesson_boost: float
    total: float
    words: float = 0.0
    evidence: float = 0.0
    linked: float = 0.0
    key: float = Field(default=0.0, exclude_if=lambda value: not value)


class MemoryOut(BaseModel):
    id: str
    content: str
    hierarchy_level: int
    memory_type: str
    rank: int | None = None
    similarity_score: float | None = None
    score: ScoreOut | None = None
    strength: float
    importance_score: float
    source_info: str
    created_date: str
    source_date: str | None = None
    modified_date: str | None = None
    last_accessed: str | None = None
    access_count: int
    tags: list[str]
    project: str
    metadata: dict[str, Any]
    superseded_by: list[str] = Field(
        default_factory=list, description="Ids of memories that supersede this one (see link_memories)."
    )
    key: str | None = Field(default=None, exclude_if=lambda value: value is None)


class ErrorResult(BaseModel):
    success: bool = False
    error: str
    message: str


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


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
        "source_info": format_source_info(memory),
        "created_date": memory.created_date.isoformat(),
        "source_date": iso(memory.source_date),
        "modified_date": iso(memory.modified_date),
        "last_accessed": iso(memory.last_accessed),
        "access_count": memory.access_count,
        "tags": list(memory.tags),
        "project": memory.project,
        "metadata": memory.shown_metadata,
        "key": memory.key,
    }


def memory_out(memory: CognitiveMemory, now: datetime | None = None) -> MemoryOut:
    """A whole memory, without recall's scores (strength computed at ``now``)."""
    return MemoryOut(**memory_fields(memory, now))


def memories(count: int) -> str:
    """``1 memory``, ``3 memories``."""
    return f"{count} {'memory' if count == 1 else 'memories'}"


def preview(text: str) -> str:
    """``text`` on one line, cut to PREVIEW_CHARS with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 3] + "..."


def format_source_info(memory: CognitiveMemory) -> str:
    """📄 markdown, 🔄 🔥 💡 git patterns, 📝 session lessons, 💭 everything stored by hand."""
    metadata = memory.metadata
    if memory.source is SourceKind.MARKDOWN:
        name = PurePath(memory.origin or "document").name
        return f"📄 {name} → {metadata.get('section') or metadata.get('title', 'document')}"
    if memory.source is SourceKind.GIT:
        repo = metadata.get("repository", "repository")
        pattern = metadata.get("pattern_type")
        if pattern == "cochange":
            return f"🔄 {repo} → {metadata.get('file_a', '?')} ↔ {metadata.get('file_b', '?')}"
        if pattern == "hotspot":
            return f"🔥 {repo} → {metadata.get('file_path', '?')}"
        return f"💡 {repo} → {metadata.get('solution_type', 'solution')}"
    if memory.source is SourceKind.SESSION_LESSON:
        return f"📝 Session Lesson ({metadata.get('lesson_type', 'insight')})"
    source = metadata.get("source_info")
    return f"💭 {source}" if source else MANUAL_SOURCE
