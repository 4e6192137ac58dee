"""Typed requests: the pydantic models tools publish as input schemas and the facade takes.

Each rule about the shape of an argument lives here once; the MCP SDK applies it to tool calls,
and the typer commands build the same models (``ValidationError`` becomes one ``Error:`` line).
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, time
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from cognitive_memory.core.links import MAX_DEPTH, MAX_NOTE_CHARS
from cognitive_memory.core.memory import GLOBAL_PROJECT
from cognitive_memory.core.pruning import PruneCriteria
from cognitive_memory.core.validation import (
    ALL_PROJECTS,
    MAX_PROJECT_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    MAX_TEXT_CHARS,
    check_project,
)
from cognitive_memory.errors import InvalidInputError
from cognitive_memory.index.vector_store import VectorFilter
from cognitive_memory.service.schemas import LevelValue, MemoryTypeName, RecallSource, RelationName

__all__ = [
    "ALL_PROJECTS",
    "MAX_PROJECT_CHARS",
    "DateBound",
    "Importance",
    "JsonNumber",
    "Kind",
    "Level",
    "NewText",
    "SourceInfo",
    "Tags",
    "LinkDepth",
    "LinkNote",
    "LinkRequest",
    "MemoryChanges",
    "MemoryId",
    "ProjectName",
    "KeepLatest",
    "MaxImportance",
    "NotAccessedDays",
    "OlderThanDays",
    "PruneLevels",
    "PruneProjects",
    "PruneRequest",
    "PruneTags",
    "RecallFilters",
    "RelatedRequest",
    "StoreContext",
    "UnlinkRequest",
    "date_bound",
    "scope_filter",
]


def _check_project(value: str) -> str:
    """The store's rule (core.validation.check_project), as pydantic reports a field's error."""
    try:
        return check_project(value)
    except InvalidInputError:
        raise ValueError(
            "a project name is 1-100 characters without control characters or '*' "
            "(use filters.projects: ['*'] for every project)"
        ) from None


ProjectName = Annotated[
    str,
    Field(min_length=1, max_length=MAX_PROJECT_CHARS, description="A project name, e.g. the repository's."),
    AfterValidator(_check_project),
]


def date_bound(value: str) -> datetime:
    """An ISO 8601 date or date-time as an aware datetime (UTC when no offset is given); a date
    alone means the start of that day in UTC."""
    text = value.strip()
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), time(), UTC)
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError(
            f"{value!r} is not an ISO 8601 date (2024-05-01) or date-time (2024-05-01T09:30:00Z)"
        ) from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _check_bound(value: str) -> str:
    date_bound(value)
    return value


DateBound = Annotated[
    str,
    Field(max_length=40, description="ISO 8601 date or date-time; a date alone is that day, UTC."),
    AfterValidator(_check_bound),
]


MemoryId = Annotated[
    str, Field(min_length=1, max_length=100, description="A memory id, as store_memory or recall returns it.")
]
LinkNote = Annotated[str, Field(max_length=MAX_NOTE_CHARS, description="Why the memories are linked.")]


def _json_number(value: object) -> object:
    """A number as JSON Schema's "integer"/"number" means it: never a string ("1") or a boolean
    (true), which pydantic's lax mode would turn into 1; 5.0 still counts as the integer 5."""
    if isinstance(value, str | bool):
        raise PydanticCustomError(
            "int_type",
            "Input should be a number, not the {kind} {shown}",
            {"kind": "boolean" if isinstance(value, bool) else "string", "shown": json.dumps(value)[:40]},
        )
    return value


# Goes after the Field constraints (``Annotated[int, Field(ge=1), JsonNumber]``): placed before
# them, pydantic publishes ``ge``/``le`` in the JSON schema instead of ``minimum``/``maximum``.
JsonNumber = BeforeValidator(_json_number)

LinkDepth = Annotated[
    int, Field(ge=1, le=MAX_DEPTH, description="How many links to follow from the memory."), JsonNumber
]


class LinkRequest(BaseModel):
    """``from_id`` -[relation]-> ``to_id``, with an optional note."""

    model_config = ConfigDict(extra="forbid")

    from_id: MemoryId
    to_id: MemoryId
    relation: RelationName
    note: LinkNote | None = None


class UnlinkRequest(BaseModel):
    """The links from ``from_id`` to ``to_id`` to remove: of ``relation`` only, or all."""

    model_config = ConfigDict(extra="forbid")

    from_id: MemoryId
    to_id: MemoryId
    relation: RelationName | None = None


class RelatedRequest(BaseModel):
    """The neighbourhood of ``memory_id``: ``depth`` links away, over ``relations`` (empty: all)."""

    model_config = ConfigDict(extra="forbid")

    memory_id: MemoryId
    depth: LinkDepth = 1
    relations: list[RelationName] = Field(default_factory=list)


# Field types shared by store_memory, update_memory and the typer commands: one rule each.
Level = Annotated[int, Field(ge=0, le=2, description="0 = concept, 1 = context, 2 = episode."), JsonNumber]
Kind = Literal["episodic", "semantic"]
Importance = Annotated[float, Field(ge=0.0, le=1.0, description="0.0 to 1.0."), JsonNumber]
Tags = Annotated[
    list[Annotated[str, Field(max_length=MAX_TAG_CHARS)]], Field(max_length=MAX_TAGS, description="Tags.")
]
SourceInfo = Annotated[str, Field(max_length=500, description="Where this knowledge came from.")]
NewText = Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS, description="The new text.")]


MAX_SPEAKER_CHARS = 100
SpeakerName = Annotated[
    str, Field(min_length=1, max_length=MAX_SPEAKER_CHARS, pattern=r"\w"), AfterValidator(str.strip)
]


class StoreContext(BaseModel):
    """Optional placement and labels for the memory."""

    model_config = ConfigDict(extra="forbid")

    hierarchy_level: Annotated[Level | None, Field(description="Inferred if omitted.")] = None
    memory_type: Annotated[Kind | None, Field(description="Inferred if omitted.")] = None
    importance_score: Annotated[Importance, Field(description="Default 0.5.")] = 0.5
    tags: Annotated[Tags, Field(description="Categorization tags.")] = Field(default_factory=list)
    source_info: SourceInfo | None = None
    project: Annotated[
        ProjectName | None,
        Field(description="The project it belongs to ('global': seen from every project). Default: current."),
    ] = None
    speaker: Annotated[
        SpeakerName | None,
        Field(
            description="Who said it, when the memory is a turn of a conversation (chat, meeting, "
            "interview). Recall favours turns whose speaker the query names and passes a question's "
            "relevance to the turn that answers it; notes have no speaker."
        ),
    ] = None


class RecallFilters(BaseModel):
    """Only memories that match every given field (one of its values). Empty: no filter."""

    model_config = ConfigDict(extra="forbid")

    tags: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=MAX_TAG_CHARS)]],
        Field(max_length=MAX_TAGS, description="Memories carrying at least one of these tags."),
    ] = Field(default_factory=list)
    hierarchy_levels: Annotated[
        list[Annotated[LevelValue, JsonNumber]],
        Field(description="0 concepts, 1 contexts, 2 episodes."),
    ] = Field(default_factory=list)
    memory_types: Annotated[list[MemoryTypeName], Field(description="episodic or semantic memories.")] = (
        Field(default_factory=list)
    )
    sources: Annotated[
        list[RecallSource],
        Field(description="Loaded markdown sections, git history patterns, or session lessons."),
    ] = Field(default_factory=list)
    projects: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=MAX_PROJECT_CHARS)]],
        Field(
            max_length=50,
            description="Projects to search instead of the current one and 'global'; ['*'] for all.",
        ),
    ] = Field(default_factory=list)
    created_after: Annotated[
        DateBound | None,
        Field(description="Stored at or after this time (ISO 8601; a date alone: 00:00 UTC that day)."),
    ] = None
    created_before: Annotated[
        DateBound | None,
        Field(description="Stored before this time (ISO 8601; a date alone: 00:00 UTC that day)."),
    ] = None


class MemoryChanges(BaseModel):
    """What update_memory changes; a field left out stays as it is."""

    model_config = ConfigDict(extra="forbid")

    text: Annotated[NewText | None, Field(description="The new text (embedded and indexed again).")] = None
    tags: Annotated[
        Tags | None, Field(description="The new tags: they replace all of the memory's tags.")
    ] = None
    importance_score: Importance | None = None
    hierarchy_level: Level | None = None
    memory_type: Kind | None = None
    source_info: SourceInfo | None = None

    @model_validator(mode="after")
    def _something_changes(self) -> MemoryChanges:
        if all(getattr(self, name) is None for name in type(self).model_fields):
            raise ValueError(
                "give at least one of text, tags, importance_score, hierarchy_level, memory_type, source_info"
            )
        return self


def scope_filter(filters: RecallFilters | None, project: str) -> VectorFilter:
    """The core's filter from the caller's (``sources`` are loader types). Without
    ``filters.projects`` the search covers ``project`` and the global memories; ``["*"]`` all."""
    given = filters or RecallFilters()
    if ALL_PROJECTS in given.projects:
        projects: tuple[str, ...] = ()
    else:
        projects = tuple(dict.fromkeys(given.projects)) or tuple(dict.fromkeys((project, GLOBAL_PROJECT)))
    after = date_bound(given.created_after) if given.created_after else None
    before = date_bound(given.created_before) if given.created_before else None
    if after is not None and before is not None and after >= before:
        raise InvalidInputError(
            f"`created_after` ({given.created_after}) is not before "
            f"`created_before` ({given.created_before}): no memory can match.",
            code="invalid_value",
        )
    return VectorFilter(
        hierarchy_levels=tuple(given.hierarchy_levels),
        memory_types=tuple(given.memory_types),
        loader_types=tuple(given.sources),
        tags=tuple(given.tags),
        projects=projects,
        created_after=after.timestamp() if after else None,
        created_before=before.timestamp() if before else None,
    )


PruneDays = Annotated[float, Field(ge=0, le=36500), JsonNumber]
# The criteria of prune_memories, one type each: the tool's parameters and PruneRequest share them.
OlderThanDays = Annotated[PruneDays | None, Field(description="Stored more than N days ago.")]
NotAccessedDays = Annotated[
    PruneDays | None, Field(description="Not recalled for N days (never recalled: since stored).")
]
MaxImportance = Annotated[Importance | None, Field(description="Importance at most this (0.0 to 1.0).")]
PruneTags = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=MAX_TAG_CHARS)]],
    Field(max_length=MAX_TAGS, description="Carrying at least one of these tags."),
]
PruneProjects = Annotated[
    list[ProjectName], Field(max_length=50, description="In one of these projects (default: every project).")
]
PruneLevels = Annotated[
    list[Annotated[LevelValue, JsonNumber]], Field(description="0 concepts, 1 contexts, 2 episodes.")
]
KeepLatest = Annotated[
    int, Field(ge=0, le=1_000_000, description="Spare the N newest of the memories that match."), JsonNumber
]


class PruneRequest(BaseModel):
    """What prune_memories moves to the trash: memories matching every criterion given."""

    model_config = ConfigDict(extra="forbid")

    older_than_days: OlderThanDays = None
    not_accessed_days: NotAccessedDays = None
    max_importance: MaxImportance = None
    tags: PruneTags = Field(default_factory=list)
    projects: PruneProjects = Field(default_factory=list)
    hierarchy_levels: PruneLevels = Field(default_factory=list)
    keep_latest: KeepLatest = 0

    def criteria(self) -> PruneCriteria:
        """The core's criteria (refused there when none selects memories)."""
        return PruneCriteria(
            older_than_days=self.older_than_days,
            not_accessed_days=self.not_accessed_days,
            max_importance=self.max_importance,
            tags=tuple(dict.fromkeys(self.tags)),
            projects=tuple(dict.fromkeys(self.projects)),
            hierarchy_levels=tuple(dict.fromkeys(self.hierarchy_levels)),
            keep_latest=self.keep_latest,
        )
