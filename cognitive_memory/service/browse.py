"""Browse: memories opened by id (get_memories, `memory_system get`, the dashboard's memory page)
or listed a page at a time (list_memories, `memory_system list`); answers and their text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field

from cognitive_memory.core.memory import DEFAULT_PROJECT, GLOBAL_PROJECT, CognitiveMemory
from cognitive_memory.core.store.values import TextMatch, VersionRow
from cognitive_memory.core.validation import MAX_QUERY_CHARS, check_key, check_text
from cognitive_memory.errors import InvalidInputError
from cognitive_memory.service.fields import optional
from cognitive_memory.service.filters import RecallFilters, scope_filter
from cognitive_memory.service.overview import OverviewOut, format_overview
from cognitive_memory.service.overview import overview as overview_of
from cognitive_memory.service.paging import OrderBy, checked_order, checked_size
from cognitive_memory.service.records import LEVEL_NAMES, MemoryOut, memory_fields, memory_out, preview
from cognitive_memory.service.trash import trashed_ids
from cognitive_memory.system import CognitiveSystem

__all__ = [
    "GetResult",
    "ListResult",
    "MemoryRead",
    "MemoryRecordOut",
    "VersionOut",
    "format_get",
    "format_list",
    "get",
    "key_holders",
    "list_page",
    "read",
]

# How a list_memories page is sorted, in its message.
_ORDER_NAMES = {
    "created": "newest first",
    "last_accessed": "most recently accessed first (never accessed last)",
    "importance": "most important first",
    "access_count": "most accessed first",
}


class VersionOut(BaseModel):
    """An earlier version of a memory, as it was before an update replaced it."""

    version: int = Field(description="1 is the oldest.")
    content: str
    hierarchy_level: int
    memory_type: str
    importance_score: float
    tags: list[str]
    project: str
    metadata: dict[str, Any]
    replaced_at: str = Field(description="When an update replaced this version (ISO 8601).")
    replaced_by_session: str | None = None


class MemoryRecordOut(MemoryOut):
    history: list[VersionOut] | None = Field(
        default=None, description="Earlier versions, oldest first (only with include_history)."
    )
    session: str | None = optional("The session that stored it.")


class GetResult(BaseModel):
    success: bool = True
    memories: list[MemoryRecordOut] = Field(description="The memories found, in the order asked.")
    missing: list[str] = Field(description="Ids (and keys) that do not exist (never stored, or forgotten).")
    in_trash: list[str] = Field(
        default_factory=list, description="Missing ids still in the trash (memory_system trash restore)."
    )
    message: str


class ListResult(BaseModel):
    success: bool = True
    order_by: OrderBy
    total: int = Field(description="How many memories match the filters, on every page together.")
    memories: list[MemoryOut]
    next_cursor: str | None = Field(
        default=None,
        description="Pass it as cursor (with the same order_by) for the next page; None on the last page.",
    )
    overview: OverviewOut | None = Field(
        default=None, description="With overview: the tags and sessions of every matching memory."
    )
    message: str


@dataclass(frozen=True, slots=True)
class MemoryRead:
    """A memory whole with its versions, and the revision of that same read (what an edit carries
    as ``expected_revision``)."""

    record: MemoryRecordOut
    revision: str


def _version_out(row: VersionRow) -> VersionOut:
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


def _record_out(
    memory: CognitiveMemory, history: Sequence[VersionRow] | None, now: datetime | None = None
) -> MemoryRecordOut:
    """A whole memory with its earlier versions (None: not asked for), strength computed at ``now``."""
    versions = [_version_out(row) for row in history] if history is not None else None
    return MemoryRecordOut(**memory_fields(memory, now), history=versions, session=memory.session_id)


def get(
    system: CognitiveSystem,
    memory_ids: Sequence[str],
    include_history: bool,
    keys: Sequence[str] = (),
    project: str = DEFAULT_PROJECT,
) -> GetResult:
    """The memories with these ids, then those holding these ``keys`` in ``project`` (else among
    the global memories), whole, in the order asked (ids and keys not found are ``missing``);
    with ``include_history`` each carries its earlier versions, oldest first. Opening a memory
    counts as a use (its strength rises)."""
    ids = list(dict.fromkeys(memory_ids))
    named = list(dict.fromkeys(check_key(key) for key in keys))
    if not ids and not named:
        raise InvalidInputError("Give memory ids or keys: the memories to read.", code="missing_field")
    holders = key_holders(system, named, project)
    asked = list(dict.fromkeys([*ids, *holders.values()]))
    found, now = system.open(asked), system.now()
    history = system.browsing.versions([m.id for m in found]) if include_history else None
    records = [_record_out(m, history.get(m.id, []) if history is not None else None, now) for m in found]
    missing = [i for i in ids if i not in {m.id for m in found}]
    trashed = trashed_ids(system, missing)
    missing += [key for key in named if key not in holders]
    in_trash = f"; {len(trashed)} in the trash (memory_system trash restore ID)" if trashed else ""
    message = f"Found {len(found)} of {len(ids) + len(named)} memories{in_trash}"
    return GetResult(memories=records, missing=missing, in_trash=trashed, message=message)


def key_holders(system: CognitiveSystem, keys: Sequence[str], project: str) -> dict[str, str]:
    """The id of the memory holding each key found, in ``project`` first, else among the global ones."""
    held = system.browsing.keyed(keys, list(dict.fromkeys((project, GLOBAL_PROJECT))))
    by_key = {m.key: m.id for m in held if m.project != project and m.key}
    by_key |= {m.key: m.id for m in held if m.project == project and m.key}
    return {key: by_key[key] for key in keys if key in by_key}


def read(system: CognitiveSystem, memory_id: str) -> MemoryRead | None:
    """The memory whole with all its versions, without counting the read as a use; None when no
    memory has that id."""
    found = system.browsing.memories([memory_id])
    if not found:
        return None
    history = system.browsing.versions([memory_id]).get(memory_id, [])
    return MemoryRead(_record_out(found[0], history, system.now()), found[0].revision)


def list_page(
    system: CognitiveSystem,
    filters: RecallFilters | None,
    order_by: str,
    limit: int,
    cursor: str | None,
    *,
    project: str,
    session: str | None = None,
    text: str | None = None,
    overview: bool = False,
) -> ListResult:
    """A page of the memories of ``project`` and the global ones (as recall scopes them), highest
    ``order_by`` first; ``cursor`` (a page's ``next_cursor``) continues after that page;
    ``session`` is the caller's (``filters.session`` 'current'). With ``text``, only memories whose
    own text holds each of its words, a misspelt word matching its corrections from the store's
    vocabulary too; exact matches come first. With ``overview``, the tags and sessions of all the
    matching memories (``overview.py``)."""
    order = checked_order(order_by)
    where = scope_filter(filters, project, session)
    match = None if text is None else _text_match(system, text)
    page = system.browsing.page(where, order, checked_size(limit), cursor, match)
    return ListResult(
        order_by=order,
        total=page.total,
        memories=[memory_out(m, system.now()) for m in page.memories],
        next_cursor=page.next_cursor,
        overview=overview_of(system, where, match) if overview else None,
        message=f"{len(page.memories)} of {page.total} memories, {_ORDER_NAMES[order]}"
        if page.total
        else "No memories match",
    )


def _text_match(system: CognitiveSystem, text: str) -> TextMatch:
    """What list_memories' ``text`` matches; refused when it holds no word."""
    match = system.browsing.text_match(check_text(text, field="text", limit=MAX_QUERY_CHARS))
    if match is None:
        raise InvalidInputError(f"`text` {text!r} holds no word to look for.", code="invalid_value")
    return match


def format_get(result: GetResult) -> str:
    """Each memory whole (all of its text), and the ids not found."""
    lines = [f"✓ {result.message}" if result.memories else f"✗ {result.message}"]
    lines += [f"Not found: {memory_id}" for memory_id in result.missing]
    for memory in result.memories:
        lines += ["", *_record_lines(memory)]
    return "\n".join(lines)


def _record_lines(memory: MemoryRecordOut) -> list[str]:
    level = f"L{memory.hierarchy_level} ({LEVEL_NAMES[memory.hierarchy_level]})"
    lines = [
        f"── {memory.id} ──" + (f" key {memory.key}" if memory.key else ""),
        f"[{memory.memory_type}] {level}, project {memory.project}, importance "
        f"{memory.importance_score:.2f}, strength {memory.strength:.2f}",
        f"Tags: {', '.join(memory.tags) or 'none'}",
        f"Source: {memory.source_info}",
        f"Created: {memory.created_date}, Modified: {memory.modified_date or 'never'}, "
        f"Last accessed: {memory.last_accessed or 'never'} ({memory.access_count} times)",
        "",
        memory.content,
    ]
    if memory.history is not None:
        lines += ["", f"History ({len(memory.history)} earlier versions):"]
        for version in memory.history:
            lines += _version_lines(version)
    return lines


def _version_lines(version: VersionOut) -> list[str]:
    return [
        f"  v{version.version} (replaced {version.replaced_at}): [{version.memory_type}] "
        f"L{version.hierarchy_level}, importance {version.importance_score:.2f}, "
        f"tags: {', '.join(version.tags) or 'none'}",
        *(f"    {line}" for line in version.content.splitlines()),
    ]


def format_list(result: ListResult) -> str:
    """One page of memories, previewed as recall shows them, and how to get the next page."""
    lines = [f"📋 {result.message}"]
    for number, memory in enumerate(result.memories, start=1):
        lines += ["", *_memory_lines(number, memory)]
    if result.next_cursor:
        lines += ["", f"Next page: cursor {result.next_cursor}"]
    if result.overview is not None:
        lines += ["", *format_overview(result.overview)]
    return "\n".join(lines)


def _memory_lines(number: int, memory: MemoryOut) -> list[str]:
    score = (
        f"Score: {memory.score.total:.2f}, Similarity: {memory.similarity_score:.2f}, "
        if memory.score
        else ""
    )
    return [
        f"{number}. [{memory.memory_type}] {preview(memory.content)}",
        f"   ID: {memory.id}, Level: L{memory.hierarchy_level}, {score}Strength: {memory.strength:.2f}",
        f"   Source: {memory.source_info}",
        f"   Created: {memory.created_date}, Accessed: {memory.access_count} times",
        *([f"   Superseded by: {', '.join(memory.superseded_by)}"] if memory.superseded_by else []),
    ]
