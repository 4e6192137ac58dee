"""Links between memories: link, unlink and the neighbourhood of a memory (link_memories,
unlink_memories, related_memories, `memory_system link`/`unlink`/`related`, the dashboard's graph);
their requests, answers and text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from cognitive_memory import linking
from cognitive_memory.core.links import (
    DEFAULT_WEIGHT,
    MAX_DEPTH,
    MAX_NOTE_CHARS,
    MAX_RELATION_CHARS,
    RELATED_LIMIT,
    check_note,
    check_relation,
    check_relations,
)
from cognitive_memory.core.store.values import Neighbour
from cognitive_memory.service.fields import JsonNumber, MemoryId
from cognitive_memory.service.records import preview
from cognitive_memory.system import CognitiveSystem

__all__ = [
    "LinkDepth",
    "LinkDirection",
    "LinkNote",
    "LinkRequest",
    "LinkResult",
    "LinkWeight",
    "RelatedOut",
    "RelatedRequest",
    "RelatedResult",
    "RelationName",
    "UnlinkRequest",
    "UnlinkResult",
    "format_link",
    "format_related",
    "format_unlink",
    "link",
    "related",
    "unlink",
]

# A relation: one of the core's RELATIONS or a name of the caller's own; the core checks and
# folds it (``core.links.check_relation``), the same on every path in.
RelationName = Annotated[str, Field(max_length=MAX_RELATION_CHARS)]
LinkDirection = Literal["outgoing", "incoming"]
# Characters of a linked memory shown in a related_memories answer.
RELATED_PREVIEW = 200

LinkNote = Annotated[str, Field(max_length=MAX_NOTE_CHARS)]
LinkDepth = Annotated[int, Field(ge=1, le=MAX_DEPTH), JsonNumber]
LinkWeight = Annotated[float, Field(ge=0, le=1), JsonNumber]


class LinkRequest(BaseModel):
    """``from_id`` -[relation]-> ``to_id``, with an optional note and weight."""

    model_config = ConfigDict(extra="forbid")

    from_id: MemoryId
    to_id: MemoryId
    relation: RelationName
    note: LinkNote | None = None
    weight: LinkWeight | None = None


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


class LinkResult(BaseModel):
    success: bool = True
    from_id: str
    to_id: str
    relation: str
    note: str | None = None
    weight: float = Field(description="Its weight in activation spreading.")
    created: bool = Field(description="False when the link already existed.")
    previous_weight: float | None = Field(
        default=None, description="Its weight before, when linking again gave it another."
    )
    message: str


class UnlinkResult(BaseModel):
    success: bool = True
    from_id: str
    to_id: str
    removed: list[str] = Field(description="The relations removed; empty when there was no link.")
    message: str


class RelatedOut(BaseModel):
    """A memory linked to the start, by the last link of its path."""

    id: str
    content: str = Field(description="Its first 200 characters.")
    relation: str
    direction: LinkDirection = Field(
        description="outgoing: the link points from the previous memory of the path to this one; "
        "incoming: from this one to the previous memory."
    )
    depth: int = Field(description=f"Links between the start and this memory (1-{MAX_DEPTH}).")
    path: list[str] = Field(description="Ids from the start to this memory.")
    note: str | None = None
    weight: float


class RelatedResult(BaseModel):
    success: bool = True
    memory_id: str
    depth: int
    relations: list[str] = Field(description="The relations followed; empty: all.")
    related: list[RelatedOut] = Field(description="Nearest first; each memory once, at its smallest depth.")
    truncated: bool = Field(
        description=f"True when the walk stopped at {RELATED_LIMIT} memories with more linked."
    )
    message: str


def link(
    system: CognitiveSystem,
    from_id: str,
    to_id: str,
    relation: str,
    note: str | None,
    session_id: str,
    weight: float | None = None,
) -> LinkResult:
    """Link ``from_id`` -[relation]-> ``to_id`` of ``weight`` (None: the default); linking again
    leaves the link as it was, but for a ``weight`` given that differs from its own."""
    kind = check_relation(relation)
    written = linking.link(
        system.records, from_id, to_id, kind, note=note, session_id=session_id, weight=weight
    )
    return LinkResult(
        from_id=from_id,
        to_id=to_id,
        relation=kind,
        note=check_note(note),
        weight=written.weight,
        created=written.created,
        previous_weight=written.previous,
        message=_link_message(f"{from_id} {kind} {to_id}", written.created, written.weight, written.previous),
    )


def _link_message(named: str, created: bool, weight: float, previous: float | None) -> str:
    if created:
        return f"Linked: {named} (weight {weight:g})"
    if previous is not None:
        return f"Reweighted: {named} (weight {previous:g} -> {weight:g})"
    return f"Already linked: {named} (unchanged)"


def unlink(system: CognitiveSystem, from_id: str, to_id: str, relation: str | None) -> UnlinkResult:
    """Remove the links from ``from_id`` to ``to_id`` (of ``relation`` only, if given)."""
    kind = check_relation(relation) if relation is not None else None
    removed = linking.unlink(system.records, from_id, to_id, kind)
    message = (
        f"Removed {len(removed)} link(s) from {from_id} to {to_id}"
        if removed
        else f"No {kind or 'link'} from {from_id} to {to_id}: nothing to remove"
    )
    return UnlinkResult(from_id=from_id, to_id=to_id, removed=removed, message=message)


def related(system: CognitiveSystem, memory_id: str, depth: int, relations: Sequence[str]) -> RelatedResult:
    """The memories linked to ``memory_id`` within ``depth`` links (both directions), nearest
    first, each with the relation, direction and path that reached it; the walk stops at
    RELATED_LIMIT memories (``truncated`` says so)."""
    kinds = check_relations(relations)
    found = linking.related(system.records, memory_id, depth, kinds)
    ids = [neighbour.memory_id for neighbour in found.found]
    content = {memory.id: memory.content for memory in system.browsing.memories(ids)}
    linked = [_related_out(n, content[n.memory_id]) for n in found.found if n.memory_id in content]
    more = (
        f" (the walk stopped at {RELATED_LIMIT}: more are linked; narrow the relations or the depth)"
        if found.truncated
        else ""
    )
    return RelatedResult(
        memory_id=memory_id,
        depth=depth,
        relations=list(kinds),
        related=linked,
        truncated=found.truncated,
        message=f"{len(linked)} memories linked to {memory_id} within {depth} link(s){more}",
    )


def _related_out(neighbour: Neighbour, content: str) -> RelatedOut:
    """One memory of a ``related_memories`` answer (``content`` is cut to its first 200 characters)."""
    return RelatedOut(
        id=neighbour.memory_id,
        content=content[:RELATED_PREVIEW],
        relation=neighbour.relation,
        direction=neighbour.direction,
        depth=neighbour.depth,
        path=list(neighbour.path),
        note=neighbour.note,
        weight=neighbour.weight,
    )


def format_link(result: LinkResult) -> str:
    note = [f"Note: {result.note}"] if result.note and result.created else []
    return "\n".join([f"✓ {result.message}", *note])


def format_unlink(result: UnlinkResult) -> str:
    return f"✓ {result.message}" if result.removed else f"✗ {result.message}"


def format_related(result: RelatedResult) -> str:
    """One block per memory: depth, the link that reached it (→ outgoing, ← incoming), the path."""
    lines = [f"🔗 {result.message}"]
    for item in result.related:
        arrow = f"{item.relation} →" if item.direction == "outgoing" else f"← {item.relation}"
        if item.weight != DEFAULT_WEIGHT:
            arrow += f" (weight {item.weight:g})"
        lines += [
            "",
            f"[depth {item.depth}] {arrow} {item.id}",
            f"   {preview(item.content)}",
            f"   Path: {' > '.join(item.path)}",
        ]
        if item.note:
            lines.append(f"   Note: {item.note}")
    return "\n".join(lines)
