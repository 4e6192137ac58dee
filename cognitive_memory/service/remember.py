"""Remember: store an experience (store_memory, `memory_system store`) or a lesson of the session
(session_lessons); their requests, answers and text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from cognitive_memory.core.memory import SourceKind
from cognitive_memory.index.vector_store import VectorHit
from cognitive_memory.outcomes import StoreOutcome
from cognitive_memory.service.fields import (
    Importance,
    Kind,
    Level,
    MemoryKey,
    Metadata,
    ProjectName,
    SessionName,
    SourceInfo,
    Tags,
    flag,
    optional,
)
from cognitive_memory.service.records import LEVEL_NAMES, preview
from cognitive_memory.system import CognitiveSystem

__all__ = [
    "IMPORTANCE_SCORES",
    "LESSON_PLACEMENT",
    "LESSON_SUGGESTIONS",
    "ImportanceLevel",
    "LessonResult",
    "LessonType",
    "SimilarOut",
    "StoreContext",
    "StoreResult",
    "format_lesson",
    "format_store",
    "store",
    "store_lesson",
]

LessonType = Literal["discovery", "pattern", "solution", "warning", "context"]
ImportanceLevel = Literal["low", "medium", "high", "critical"]

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

# Characters of a similar memory shown in a store's answer.
SIMILAR_PREVIEW = 200
# Below this novelty (a cosine above 0.7) a store names its nearest memory even when it is under
# the near-duplicate threshold, which a paraphrase of a stored fact often is (docs/tools.md).
NEAREST_BELOW_NOVELTY = 0.3

MAX_SPEAKER_CHARS = 100
SpeakerName = Annotated[
    str, Field(min_length=1, max_length=MAX_SPEAKER_CHARS, pattern=r"\w"), AfterValidator(str.strip)
]


class StoreContext(BaseModel):
    """Placement and labels."""

    model_config = ConfigDict(extra="forbid")

    hierarchy_level: Level | None = None
    memory_type: Kind | None = None
    importance_score: Importance = 0.5
    tags: Tags = Field(default_factory=list)
    source_info: SourceInfo | None = None
    project: Annotated[ProjectName | None, Field(description="'global': seen from every project.")] = None
    speaker: Annotated[SpeakerName | None, Field(description="Who said it (a conversation turn).")] = None
    key: Annotated[MemoryKey | None, Field(description="A held key updates its memory.")] = None
    session: SessionName | None = None
    metadata: Metadata | None = None


class SimilarOut(BaseModel):
    """A memory close to one just stored."""

    id: str
    similarity: float = Field(description="Cosine similarity to the stored text.")
    preview: str = Field(description="Its first 200 characters.")


class StoreResult(BaseModel):
    success: bool = True
    memory_id: str | None = optional("Absent in a dry run that would add a memory.")
    hierarchy_level: int
    memory_type: str
    importance_score: float
    tags: list[str]
    project: str
    stored_at: str
    queued: bool = Field(description="True when the vector waits in the outbox for the index.")
    retry_in_seconds: float | None = Field(
        default=None, description="When queued: seconds until the index is retried (it drains by itself)."
    )
    duplicate: bool = Field(
        default=False,
        description="The same text was already stored in this project: memory_id is that memory.",
    )
    novelty: float | None = Field(
        default=None,
        description="1 - the highest cosine to another memory of the project (1.0: nothing alike).",
    )
    similar: list[SimilarOut] = Field(
        default_factory=list, description="Near duplicates: consider update_memory on one of them instead."
    )
    nearest: SimilarOut | None = optional("The most similar memory, when novelty is under 0.3.")
    key: str | None = optional()
    updated: bool = flag("Its key was held: memory_id was updated, its previous state kept as a version.")
    dry_run: bool = flag("Nothing was stored.")
    message: str


class LessonResult(BaseModel):
    success: bool = True
    lesson_id: str
    lesson_type: str
    importance_level: str
    session_id: str
    hierarchy_level: int
    memory_type: str
    stored_at: str
    queued: bool
    project: str
    duplicate: bool = False
    message: str
    suggestion: str


def store(
    system: CognitiveSystem,
    text: str,
    context: StoreContext | None,
    project: str,
    session_id: str,
    *,
    dry_run: bool = False,
) -> StoreResult:
    """Store ``text`` in ``context.project``, else ``project``; the same text already there is not
    stored again: the answer names it as a duplicate. A ``context.key`` held in the project
    updates its memory (the text and the fields given). ``dry_run`` stores nothing and says what
    storing would do."""
    given = context or StoreContext()
    chosen = given.model_fields_set
    metadata: dict[str, Any] = {"source_info": given.source_info} if given.source_info else {}
    outcome = system.store(
        text,
        hierarchy_level=given.hierarchy_level,
        memory_type=given.memory_type,
        importance_score=given.importance_score if "importance_score" in chosen else None,
        tags=given.tags if "tags" in chosen else None,
        metadata=metadata,
        session_id=given.session or session_id,
        project=given.project or project,
        speaker=given.speaker or None,
        key=given.key,
        fields=given.metadata,
        dry_run=dry_run,
    )
    return _store_result(system, outcome, dry_run)


def _store_result(system: CognitiveSystem, outcome: StoreOutcome, dry_run: bool) -> StoreResult:
    memory = outcome.memory
    new = dry_run and not outcome.duplicate and not outcome.updated
    nearest = _nearest(system, outcome)
    return StoreResult(
        memory_id=None if new else memory.id,
        hierarchy_level=int(memory.hierarchy_level),
        memory_type=memory.memory_type.value,
        importance_score=memory.importance_score,
        tags=list(memory.tags),
        project=memory.project,
        stored_at=memory.timestamp.isoformat(),
        queued=outcome.queued,
        retry_in_seconds=system.retry_seconds if outcome.queued else None,
        duplicate=outcome.duplicate,
        novelty=_rounded(outcome.novelty),
        similar=_similar(system, outcome.similar),
        nearest=nearest,
        key=memory.key,
        updated=outcome.updated,
        dry_run=dry_run,
        message=_store_message(outcome, dry_run, nearest),
    )


def _nearest(system: CognitiveSystem, outcome: StoreOutcome) -> SimilarOut | None:
    """The nearest memory when the text is close to it (novelty under ``NEAREST_BELOW_NOVELTY``),
    near duplicate or not; None for a duplicate, which ``memory_id`` names already."""
    close = outcome.novelty is not None and outcome.novelty < NEAREST_BELOW_NOVELTY
    if outcome.nearest is None or outcome.duplicate or not close:
        return None
    return next(iter(_similar(system, (outcome.nearest,))), None)


def _similar(system: CognitiveSystem, found: Sequence[VectorHit]) -> list[SimilarOut]:
    hits = {hit.id: hit.score for hit in found}
    return [
        SimilarOut(
            id=memory.id, similarity=round(hits[memory.id], 4), preview=memory.content[:SIMILAR_PREVIEW]
        )
        for memory in system.browsing.memories(list(hits))
    ]


def _rounded(value: float | None) -> float | None:
    return round(value, 4) if value is not None else None


def _store_message(outcome: StoreOutcome, dry_run: bool, nearest: SimilarOut | None) -> str:
    memory = outcome.memory
    close = f"memory {nearest.id} is close (cosine {nearest.similarity:.2f})" if nearest else ""
    if dry_run:
        if outcome.updated:
            return f"Dry run, nothing stored: it would update memory {memory.id} (key {memory.key!r})"
        if outcome.duplicate:
            return f"Dry run, nothing stored: memory {memory.id} already holds this text"
        alike = " (similar memories exist)" if outcome.similar else f"; {close}" if close else ""
        return f"Dry run, nothing stored: it would be stored as a new memory{alike}"
    if outcome.updated:
        return (
            f"Memory updated under its key {memory.key!r}: its previous state is kept as "
            f"version {outcome.version}"
        )
    if outcome.duplicate:
        return "Already remembered: the same text is stored in this project (its access was refreshed)."
    if outcome.similar:
        return (
            "Experience stored successfully. Similar memories exist: if this one corrects or extends "
            "one of them, update_memory (memory_system update) on that id keeps one memory instead of two."
        )
    if close:
        return (
            f"Experience stored successfully; {close}: if this one corrects or extends it, "
            "update_memory (memory_system update) on that id keeps one memory instead of two."
        )
    return "Experience stored successfully"


def store_lesson(
    system: CognitiveSystem,
    lesson_content: str,
    lesson_type: str,
    session_context: str | None,
    importance: str,
    *,
    project: str,
    session_id: str,
) -> LessonResult:
    """Record a lesson of the session in ``project``, tagged for the session-lesson boost.
    ``lesson_type`` and ``importance`` are keys of LESSON_PLACEMENT and IMPORTANCE_SCORES."""
    level, kind = LESSON_PLACEMENT[lesson_type]
    outcome = system.store(
        lesson_content,
        hierarchy_level=level,
        memory_type=kind,
        importance_score=IMPORTANCE_SCORES[importance],
        tags=("session-lesson", lesson_type),
        metadata=_lesson_metadata(lesson_type, session_context, importance, session_id),
        session_id=session_id,
        project=project,
        source=SourceKind.SESSION_LESSON,
    )
    return LessonResult(
        lesson_id=outcome.memory.id,
        lesson_type=lesson_type,
        importance_level=importance,
        session_id=session_id,
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


def _lesson_metadata(
    lesson_type: str, session_context: str | None, importance: str, session_id: str
) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "lesson_type": lesson_type,
        "session_id": session_id,
        "importance_level": importance,
    }
    if session_context and session_context.strip():
        metadata["session_context"] = session_context.strip()
    return metadata


def format_store(result: StoreResult) -> str:
    level = f"L{result.hierarchy_level} ({LEVEL_NAMES[result.hierarchy_level]})"
    lines = [
        f"✓ {result.message}",
        "",
        *([f"Memory ID: {result.memory_id}"] if result.memory_id else []),
        *([f"Key: {result.key}"] if result.key else []),
        f"Hierarchy Level: {level}",
        f"Memory Type: {result.memory_type}",
        f"Importance Score: {result.importance_score}",
        f"Project: {result.project}",
        *([] if result.dry_run else [f"Stored At: {result.stored_at}"]),
    ]
    if result.tags:
        lines.append(f"Tags: {', '.join(result.tags)}")
    if result.novelty is not None and not result.duplicate:
        lines.append(f"Novelty: {result.novelty:.2f}")
    nearest = result.nearest
    if nearest is not None and nearest.id not in {s.id for s in result.similar}:
        lines.append(f"Nearest Memory: {nearest.id} ({nearest.similarity:.2f}): {preview(nearest.preview)}")
    if result.similar:
        lines += ["", "Similar memories:"]
        lines += [f"  {s.id} ({s.similarity:.2f}): {preview(s.preview)}" for s in result.similar]
    if result.queued:
        lines.append(
            "Note: the vector index is unavailable; this memory is saved and will be indexed "
            f"automatically (next try in {result.retry_in_seconds or 0:.0f} s)."
        )
    return "\n".join(lines)


def format_lesson(result: LessonResult) -> str:
    return "\n".join(
        [
            f"✓ {result.message}",
            "",
            f"Lesson ID: {result.lesson_id}",
            f"Lesson Type: {result.lesson_type}",
            f"Importance Level: {result.importance_level}",
            f"Session ID: {result.session_id}",
            f"Stored At: {result.stored_at}",
            "",
            f"💡 Suggestion: {result.suggestion}",
        ]
    )
