"""The export format (JSON Lines, ``cognitive-memory-export`` version 1): a header line, then one
line per memory with every field, its earlier versions and the user links that start at it.

Dates are ISO 8601 strings (one without an offset is UTC); an embedding (``--with-vectors``) is the
base64 of its little-endian float32 bytes: exact, and a third of the size of a list of decimals.
Every field is checked by the rules a store or a link applies (core.validation, core.links), so an
import takes nothing ``store_memory`` would refuse; ids are UUIDs, in their canonical spelling.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, ValidationInfo
from pydantic_core import PydanticCustomError

from cognitive_memory.core.links import check_note, check_relation
from cognitive_memory.core.memory import CognitiveMemory, HierarchyLevel, MemoryType, Vector, split_metadata
from cognitive_memory.core.metadata import caller_fields, check_fields
from cognitive_memory.core.validation import (
    check_key,
    check_memory_id,
    check_metadata,
    check_project,
    check_tags,
    check_text,
)
from cognitive_memory.errors import InvalidInputError
from cognitive_memory.storage.browse import VersionRow
from cognitive_memory.storage.transfer import LinkRow

__all__ = [
    "FORMAT",
    "VERSION",
    "ExportHeader",
    "MemoryLine",
    "decode_vector",
    "memory_line",
    "problems",
    "store_rule",
]

FORMAT = "cognitive-memory-export"
VERSION = 1
# SQLite integers are 64-bit; a larger count or version number could not be written.
MAX_INT = 2**63 - 1


def store_rule(check: Callable[[Any, str], Any], *, keep: bool = False) -> AfterValidator:
    """A rule of the core (``check(value, field)``, raising InvalidInputError) as a pydantic
    validator of the field; ``keep``: the value stays as written once it passes."""

    def validate(value: Any, info: ValidationInfo) -> Any:
        try:
            checked = check(value, info.field_name or "value")
        except InvalidInputError as exc:
            raise PydanticCustomError("store_rule", "{message}", {"message": exc.message}) from None
        return value if keep else checked

    return AfterValidator(validate)


def _utc(value: datetime) -> datetime:
    """A date without an offset is UTC; one that is not a date once in UTC (0001-01-01 at +05:00) is
    refused, as every date is compared and stored in UTC."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        value.astimezone(UTC)
    except OverflowError:
        raise PydanticCustomError(
            "date_range", "{date} falls outside the years 1-9999 in UTC", {"date": value.isoformat()}
        ) from None
    return value


MemoryId = Annotated[str, store_rule(lambda value, name: check_memory_id(value, field=name))]
Text = Annotated[str, store_rule(lambda value, name: check_text(value, field=name), keep=True)]
Project = Annotated[str, store_rule(lambda value, name: check_project(value, field=name))]
Tags = Annotated[list[str], store_rule(lambda value, _: list(check_tags(value)))]
Metadata = Annotated[dict[str, Any], store_rule(lambda value, _: check_metadata(value))]


def _check_memory_metadata(value: dict[str, Any]) -> dict[str, Any]:
    """A memory's metadata as an export writes it: plain JSON of modest size, and the caller's own
    fields in it within their bounds (``core/metadata.py``) unless a loader wrote it."""
    checked = check_metadata(value)
    source, _, _, rest = split_metadata(checked)
    if not source.is_loaded:
        check_fields(caller_fields(rest))
    return checked


MemoryMetadata = Annotated[dict[str, Any], store_rule(lambda value, _: _check_memory_metadata(value))]
Note = Annotated[str | None, store_rule(lambda value, _: check_note(value))]
Key = Annotated[str, store_rule(lambda value, name: check_key(value, field=name))]
Relation = Annotated[str, store_rule(lambda value, name: check_relation(value, field=name))]
Weight = Annotated[float, Field(ge=0.0, le=1.0)]
Date = Annotated[datetime, AfterValidator(_utc)]
Importance = Annotated[float, Field(ge=0.0, le=1.0, strict=True)]
Level = Annotated[int, Field(ge=0, le=2, strict=True)]


class _Line(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, allow_inf_nan=False)


class ExportHeader(_Line):
    """The first line: what wrote the file and how many memory lines follow."""

    format: Literal["cognitive-memory-export"]
    version: Literal[1]
    model: str = Field(max_length=200)
    dimensions: int = Field(ge=1, le=65_536)
    exported_at: Date
    count: int = Field(ge=0, le=MAX_INT)
    project: str | None = None


class VersionLine(_Line):
    version: int = Field(ge=1, le=MAX_INT)
    content: Text
    hierarchy_level: Level
    memory_type: MemoryType
    importance_score: Importance
    tags: Tags
    metadata: Metadata
    project: Project
    replaced_at: Date
    replaced_by_session: str | None = None


class LinkLine(_Line):
    to: MemoryId
    relation: Relation
    note: Note = None
    created_at: Date
    session_id: str | None = None
    weight: Weight | None = None


class MemoryLine(_Line):
    """One memory with every stored field (``key`` only when it has one, since 0014). ``metadata``
    holds the source kind, the speaker and the origin under ``loader_type``, ``speaker`` and
    ``source_path``, as every release wrote them;
    ``strength`` and ``dimensions``, written by releases before 0013, are read and ignored."""

    id: MemoryId
    content: Text
    hierarchy_level: Level
    memory_type: MemoryType
    created_date: Date
    timestamp: Date
    modified_date: Date | None = None
    source_date: Date | None = None
    last_accessed: Date | None = None
    access_count: int = Field(default=0, ge=0, le=MAX_INT)
    importance_score: Importance = 0.5
    metadata: MemoryMetadata = Field(default_factory=dict)
    tags: Tags = Field(default_factory=list)
    session_id: str | None = None
    project: Project
    key: Key | None = None
    versions: list[VersionLine] = Field(default_factory=list)
    links: list[LinkLine] = Field(default_factory=list)
    embedding: str | None = None

    def memory(self, vector: Vector | None) -> CognitiveMemory:
        source, speaker, origin, metadata = split_metadata(self.metadata)
        return CognitiveMemory(
            id=self.id,
            content=self.content,
            hierarchy_level=HierarchyLevel(self.hierarchy_level),
            memory_type=self.memory_type,
            created_date=self.created_date,
            timestamp=self.timestamp,
            modified_date=self.modified_date,
            source_date=self.source_date,
            last_accessed=self.last_accessed,
            access_count=self.access_count,
            importance_score=self.importance_score,
            metadata=metadata,
            tags=tuple(self.tags),
            cognitive_embedding=vector,
            session_id=self.session_id,
            project=self.project,
            source=source,
            speaker=speaker,
            origin=origin,
            key=self.key,
        )

    def version_rows(self) -> list[VersionRow]:
        return [
            VersionRow(
                self.id,
                v.version,
                v.content,
                v.hierarchy_level,
                v.memory_type.value,
                v.importance_score,
                tuple(v.tags),
                v.metadata,
                v.project,
                v.replaced_at.timestamp(),
                v.replaced_by_session,
            )
            for v in self.versions
        ]

    def link_rows(self) -> list[LinkRow]:
        return [
            LinkRow(
                self.id,
                link.to,
                link.relation,
                link.note,
                link.created_at.timestamp(),
                link.session_id,
                link.weight,
            )
            for link in self.links
        ]


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _epoch_iso(value: float) -> str:
    return datetime.fromtimestamp(value, UTC).isoformat()


def memory_line(
    memory: CognitiveMemory, versions: list[VersionRow], links: list[LinkRow], *, with_vector: bool
) -> dict[str, Any]:
    """The JSON object of one memory line."""
    line: dict[str, Any] = {
        "id": memory.id,
        "content": memory.content,
        "hierarchy_level": int(memory.hierarchy_level),
        "memory_type": memory.memory_type.value,
        "created_date": memory.created_date.isoformat(),
        "timestamp": memory.timestamp.isoformat(),
        "modified_date": _iso(memory.modified_date),
        "source_date": _iso(memory.source_date),
        "last_accessed": _iso(memory.last_accessed),
        "access_count": memory.access_count,
        "importance_score": memory.importance_score,
        "metadata": memory.shown_metadata,
        "tags": list(memory.tags),
        "session_id": memory.session_id,
        "project": memory.project,
        "versions": [_version(v) for v in versions],
        "links": [_link(link) for link in links],
    }
    if memory.key is not None:
        line["key"] = memory.key
    if with_vector and memory.cognitive_embedding is not None:
        line["embedding"] = base64.b64encode(memory.cognitive_embedding.astype("<f4").tobytes()).decode()
    return line


def _version(v: VersionRow) -> dict[str, Any]:
    return {
        "version": v.version,
        "content": v.content,
        "hierarchy_level": v.hierarchy_level,
        "memory_type": v.memory_type,
        "importance_score": v.importance_score,
        "tags": list(v.tags),
        "metadata": v.metadata,
        "project": v.project,
        "replaced_at": _epoch_iso(v.replaced_at),
        "replaced_by_session": v.replaced_by_session,
    }


def _link(link: LinkRow) -> dict[str, Any]:
    return {
        "to": link.to_id,
        "relation": link.relation,
        "note": link.note,
        "created_at": _epoch_iso(link.created_at),
        "session_id": link.session_id,
        "weight": link.weight,
    }


def decode_vector(text: str, dimension: int) -> Vector:
    """An ``embedding`` field back to its vector; ValueError when it is not ``dimension`` floats."""
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError as exc:
        raise ValueError(f"embedding is not base64: {exc}") from None
    if len(raw) != 4 * dimension:
        raise ValueError(f"embedding holds {len(raw) // 4} numbers; the header says {dimension}")
    vector = np.frombuffer(raw, dtype="<f4").astype(np.float32)
    if not np.isfinite(vector).all():
        raise ValueError("embedding holds numbers that are not finite (NaN or infinity)")
    return vector


def problems(exc: ValidationError, shown: int = 10) -> str:
    """What is wrong with a line, as ``field: message`` joined by ``; `` (the first ``shown``, then
    how many more); a rule's message that names its field ("`content` has ...") names it by its
    full place in the line."""
    errors = exc.errors(include_url=False)
    found = []
    for error in errors[:shown]:
        where = ".".join(str(part) for part in error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ").rstrip(".")
        named = f"`{error['loc'][-1]}`" if error["loc"] else ""
        if named and message.startswith(named):
            found.append(f"`{where}`{message[len(named) :]}")
        else:
            found.append(f"{where}: {message}" if where else message)
    if len(errors) > shown:
        found.append(f"and {len(errors) - shown} more")
    return "; ".join(found)
