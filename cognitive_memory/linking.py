"""User links between memories: link, unlink and walk them, over the store of record.

The rules (which relation names are allowed, a weight, how deep a walk goes, what a note may hold) are in
``core/links.py``; this module checks the input against them and refuses unknown ids.
"""

from __future__ import annotations

from collections.abc import Sequence

from cognitive_memory.core.links import (
    RELATED_LIMIT,
    check_depth,
    check_ends,
    check_note,
    check_relation,
    check_relations,
    check_weight,
    cycle_message,
)
from cognitive_memory.core.store import StoreOfRecord
from cognitive_memory.core.store.values import LinkWrite, Neighbourhood
from cognitive_memory.errors import InvalidInputError, NotFoundError

__all__ = ["link", "related", "require", "unknown", "unlink"]


def link(
    records: StoreOfRecord,
    from_id: str,
    to_id: str,
    relation: str,
    *,
    note: str | None = None,
    session_id: str | None = None,
    weight: float | None = None,
) -> LinkWrite:
    """Link ``from_id`` -[relation]-> ``to_id`` with ``weight`` (None: the default); ``created``
    when the link is new (linking again keeps its note, and its weight unless another is given).
    Refuses unknown ids, a link to itself and a supersedes cycle."""
    ends = check_ends(from_id, to_id)
    kind = check_relation(relation)
    written = records.links.link((*ends, kind), check_note(note), session_id, check_weight(weight))
    if written.missing:
        raise NotFoundError(unknown(written.missing))
    if written.cycle:
        raise InvalidInputError(cycle_message(*ends, written.cycle), code="supersedes_cycle")
    return written


def unlink(records: StoreOfRecord, from_id: str, to_id: str, relation: str | None = None) -> list[str]:
    """Remove the links from ``from_id`` to ``to_id`` (of ``relation`` only, if given); returns
    the relations removed (none is a value, not an error). Unknown ids are refused."""
    ends = check_ends(from_id, to_id)
    kind = check_relation(relation) if relation is not None else None
    require(records, ends)
    return records.links.unlink(*ends, kind)


def related(
    records: StoreOfRecord, memory_id: str, depth: int = 1, relations: Sequence[str] = ()
) -> Neighbourhood:
    """The memories linked to ``memory_id`` within ``depth`` (1-5) hops, in both directions,
    breadth first; the walk visits at most RELATED_LIMIT of them (``truncated`` says when more
    were reachable)."""
    hops, kinds = check_depth(depth), check_relations(relations)
    require(records, (memory_id,))
    return records.links.related(memory_id, hops, kinds, RELATED_LIMIT)


def require(records: StoreOfRecord, ids: Sequence[str]) -> None:
    """Refuse ids of memories that do not exist."""
    found = {memory.id for memory in records.memories.get(list(dict.fromkeys(ids)))}
    missing = [memory_id for memory_id in dict.fromkeys(ids) if memory_id not in found]
    if missing:
        raise NotFoundError(unknown(missing))


def unknown(ids: Sequence[str]) -> str:
    """The message refusing ids no memory has."""
    names = ", ".join(repr(memory_id) for memory_id in ids)
    return (
        f"No memory has the id {names} (forgotten, or never stored): check the ids recall_memories returned."
    )
