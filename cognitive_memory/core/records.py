"""Building and editing memory records: every field checked as a store checks it."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cognitive_memory.core.memory import DEFAULT_PROJECT, CognitiveMemory, HierarchyLevel, MemoryType, Vector
from cognitive_memory.core.metadata import check_fields, with_fields
from cognitive_memory.core.validation import check_importance, check_metadata, check_tags, check_text
from cognitive_memory.errors import InvalidInputError

__all__ = ["EDITABLE_FIELDS", "MemoryEdit", "apply_edit", "check_kind", "check_level", "new_memory"]


@dataclass(frozen=True, slots=True)
class MemoryEdit:
    """Fields to change in a memory; None leaves a field as it is (``tags`` replaces all tags,
    ``metadata`` is merged into the memory's, ``fields`` replaces all of the caller's own fields
    in it: ``core/metadata.py``)."""

    text: str | None = None
    tags: Sequence[str] | None = None
    importance_score: float | None = None
    hierarchy_level: int | None = None
    memory_type: str | None = None
    metadata: Mapping[str, Any] | None = None
    fields: Mapping[str, Any] | None = None


def new_memory(
    content: str,
    vector: Vector,
    level: HierarchyLevel,
    kind: MemoryType,
    now: datetime,
    importance: float,
    tags: tuple[str, ...],
    metadata: dict[str, Any],
    source_date: datetime | None,
    session_id: str | None,
    project: str = DEFAULT_PROJECT,
) -> CognitiveMemory:
    """A new memory with a fresh id, stored ``now``."""
    return CognitiveMemory(
        id=str(uuid.uuid4()),
        content=content,
        hierarchy_level=level,
        memory_type=kind,
        created_date=now,
        timestamp=now,
        source_date=source_date,
        importance_score=importance,
        tags=tags,
        metadata=metadata,
        cognitive_embedding=vector,
        session_id=session_id,
        project=project,
    )


EDITABLE_FIELDS = ("content", "tags", "importance_score", "hierarchy_level", "memory_type", "metadata")


def apply_edit(memory: CognitiveMemory, edit: MemoryEdit, now: datetime) -> CognitiveMemory:
    """``memory`` with ``edit`` applied, each field validated as a store validates it."""
    content = check_text(edit.text) if edit.text is not None else memory.content
    level, kind = check_level(edit.hierarchy_level), check_kind(edit.memory_type)
    level = memory.hierarchy_level if level is None else level  # HierarchyLevel(0) is falsy
    kind = memory.memory_type if kind is None else kind
    metadata = {**memory.metadata, **(edit.metadata or {})}
    if edit.fields is not None:
        metadata = with_fields(metadata, check_fields(edit.fields))
    metadata = check_metadata(metadata)
    return dataclasses.replace(
        memory,
        content=content,
        hierarchy_level=level,
        memory_type=kind,
        importance_score=check_importance(edit.importance_score)
        if edit.importance_score is not None
        else memory.importance_score,
        tags=check_tags(edit.tags) if edit.tags is not None else memory.tags,
        metadata=metadata,
        modified_date=now,
    )


def check_level(value: int | None) -> HierarchyLevel | None:
    """The level a caller gave (None: not given), or why it cannot be used."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value not in (0, 1, 2):
        raise InvalidInputError(
            f"`hierarchy_level` is {value!r}; use 0 (concept), 1 (context) or 2 (episode).",
            code="out_of_range",
        )
    return HierarchyLevel(value)


def check_kind(value: str | None) -> MemoryType | None:
    """The memory type a caller gave (None: not given), or why it cannot be used."""
    if value is None:
        return None
    try:
        return MemoryType(value)
    except ValueError as exc:
        raise InvalidInputError(
            f"`memory_type` is {value!r}; use 'episodic' or 'semantic'.", code="invalid_value"
        ) from exc
