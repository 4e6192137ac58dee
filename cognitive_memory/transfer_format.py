"""The export format (JSON Lines, ``cognitive-memory-export`` version 1): a header line, then one
line per memory with every field, its earlier versions and the user links that start at it.

Dates are ISO 8601 strings; an embedding (``--with-vectors``) is the base64 of its little-endian
float32 bytes: exact, and a third of the size of a list of decimals.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cognitive_memory.core.memory import CognitiveMemory, HierarchyLevel, MemoryType, Vector
from cognitive_memory.storage.browse import VersionRow
from cognitive_memory.storage.transfer import LinkRow

__all__ = [
    "FORMAT",
    "VERSION",
    "ExportHeader",
    "MemoryLine",
    "decode_vector",
    "memory_line",
    "problem",
]

FORMAT = "cognitive-memory-export"
VERSION = 1


class _Line(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class ExportHeader(_Line):
    """The first line: what wrote the file and how many memory lines follow."""

    format: Literal["cognitive-memory-export"]
    version: Literal[1]
    model: str
    dimensions: int
    exported_at: datetime
    count: int = Field(ge=0)
    project: str | None = None


class VersionLine(_Line):
    version: int = Field(ge=1)
    content: str
    hierarchy_level: int = Field(ge=0, le=2)
    memory_type: MemoryType
    importance_score: float
    tags: list[str]
    metadata: dict[str, Any]
    project: str
    replaced_at: datetime
    replaced_by_session: str | None = None


class LinkLine(_Line):
    to: str = Field(min_length=1)
    relation: Literal["relates_to", "supersedes", "contradicts", "caused_by", "example_of", "part_of"]
    note: str | None = None
    created_at: datetime
    session_id: str | None = None


class MemoryLine(_Line):
    """One memory with every stored field (``dimensions``: its named feature scores)."""

    id: str = Field(min_length=1)
    content: str = Field(min_length=1)
    hierarchy_level: int = Field(ge=0, le=2)
    memory_type: MemoryType
    created_date: datetime
    timestamp: datetime
    modified_date: datetime | None = None
    source_date: datetime | None = None
    last_accessed: datetime | None = None
    access_count: int = Field(default=0, ge=0)
    importance_score: float = Field(default=0.5, ge=0.0, le=1.0)
    strength: float = 1.0
    metadata: dict[str, Any] = Field(default_factory=dict)
    tags: list[str] = Field(default_factory=list)
    dimensions: dict[str, float] = Field(default_factory=dict)
    session_id: str | None = None
    project: str = Field(min_length=1)
    versions: list[VersionLine] = Field(default_factory=list)
    links: list[LinkLine] = Field(default_factory=list)
    embedding: str | None = None

    def memory(self, vector: Vector | None) -> CognitiveMemory:
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
            strength=self.strength,
            metadata=self.metadata,
            tags=tuple(self.tags),
            cognitive_embedding=vector,
            dimensions=self.dimensions,
            session_id=self.session_id,
            project=self.project,
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
            LinkRow(self.id, link.to, link.relation, link.note, link.created_at.timestamp(), link.session_id)
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
        "strength": memory.strength,
        "metadata": dict(memory.metadata),
        "tags": list(memory.tags),
        "dimensions": dict(memory.dimensions),
        "session_id": memory.session_id,
        "project": memory.project,
        "versions": [_version(v) for v in versions],
        "links": [_link(link) for link in links],
    }
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
    }


def decode_vector(text: str, dimension: int) -> Vector:
    """An ``embedding`` field back to its vector; ValueError when it is not ``dimension`` floats."""
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError as exc:
        raise ValueError(f"embedding is not base64: {exc}") from None
    if len(raw) != 4 * dimension:
        raise ValueError(f"embedding holds {len(raw) // 4} numbers; the header says {dimension}")
    return np.frombuffer(raw, dtype="<f4").astype(np.float32)


def problem(exc: ValidationError) -> str:
    """The first thing wrong with a line, as ``field: message``."""
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])
