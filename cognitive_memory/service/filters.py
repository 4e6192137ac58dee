"""Which memories recall and list_memories look at: the filters a caller gives, and the project
scope they apply in."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from cognitive_memory.core.memory import GLOBAL_PROJECT
from cognitive_memory.core.metadata import check_fields_filter
from cognitive_memory.core.validation import (
    ALL_PROJECTS,
    CURRENT_SESSION,
    MAX_PROJECT_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS,
)
from cognitive_memory.errors import InvalidInputError
from cognitive_memory.index.vector_store import VectorFilter
from cognitive_memory.service.fields import (
    DateBound,
    JsonNumber,
    LevelValue,
    MemoryTypeName,
    MetadataFilter,
    RecallSource,
    SessionFilter,
    date_bound,
)

__all__ = ["RecallFilters", "scope_filter"]


class RecallFilters(BaseModel):
    """Every field given must match (any of its values). Dates: ISO 8601, UTC; before: exclusive."""

    model_config = ConfigDict(extra="forbid")

    tags: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=MAX_TAG_CHARS)]],
        Field(max_length=MAX_TAGS),
    ] = Field(default_factory=list)
    hierarchy_levels: list[Annotated[LevelValue, JsonNumber]] = Field(default_factory=list)
    memory_types: list[MemoryTypeName] = Field(default_factory=list)
    sources: list[RecallSource] = Field(default_factory=list)
    projects: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=MAX_PROJECT_CHARS)]],
        Field(max_length=50, description="Instead of the current one and 'global'; ['*']: all."),
    ] = Field(default_factory=list)
    created_after: DateBound | None = None
    created_before: DateBound | None = None
    session: SessionFilter | None = None
    metadata: MetadataFilter | None = None


def scope_filter(filters: RecallFilters | None, project: str, session: str | None = None) -> VectorFilter:
    """The core's filter from the caller's (``sources`` are loader types). Without
    ``filters.projects`` the search covers ``project`` and the global memories; ``["*"]`` all.
    ``filters.session`` 'current' is ``session``, the caller's."""
    given = filters or RecallFilters()
    sessions = (session if given.session == CURRENT_SESSION else given.session,) if given.session else ()
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
        sessions=tuple(name for name in sessions if name),
        metadata=check_fields_filter(given.metadata),
    )
