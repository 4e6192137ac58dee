"""SQL for typed user links between memories (``relates_to``, ``supersedes``, ...), run inside
the store's transactions or reads.

A link is directed (``from_id`` -[relation]-> ``to_id``); forgetting either memory drops it (the
foreign keys cascade). For activation spreading a link is an edge of its ``weight`` in both
directions.
"""

from __future__ import annotations

from collections.abc import Sequence

from cognitive_memory.core.links import DEFAULT_WEIGHT
from cognitive_memory.core.store.values import Direction, LinkWrite, Neighbour, Neighbourhood
from cognitive_memory.storage.sql import Connection

__all__ = [
    "USER_LINK_WEIGHT",
    "Direction",
    "LinkWrite",
    "Neighbour",
    "Neighbourhood",
    "insert_link",
    "remove_links",
    "superseded_by",
    "supersedes_chain",
    "walk",
]

# The weight of a link made without one (and of every link made before links had weights).
USER_LINK_WEIGHT = DEFAULT_WEIGHT


def insert_link(
    conn: Connection,
    link: tuple[str, str, str],
    note: str | None,
    session_id: str | None,
    at: float,
    weight: float | None = None,
) -> LinkWrite:
    """Add ``(from_id, to_id, relation)`` of ``weight`` (None: USER_LINK_WEIGHT) unless an id is
    missing or it closes a supersedes cycle. Linking again keeps the link's first note, and its
    weight unless another ``weight`` is given."""
    from_id, to_id, relation = link
    found = {row[0] for row in conn.execute("SELECT id FROM memories WHERE id IN (?, ?)", (from_id, to_id))}
    missing = tuple(i for i in dict.fromkeys((from_id, to_id)) if i not in found)
    if missing:
        return LinkWrite(missing=missing)
    if relation == "supersedes":
        cycle = supersedes_chain(conn, to_id, from_id)
        if cycle:
            return LinkWrite(cycle=cycle)
    where = "WHERE from_id = ? AND to_id = ? AND relation = ?"
    held = conn.execute(f"SELECT weight FROM relations {where}", link).fetchone()
    if held is None:
        given = USER_LINK_WEIGHT if weight is None else weight
        conn.execute(
            "INSERT INTO relations (from_id, to_id, relation, note, created_at, session_id, weight) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (*link, note, at, session_id, given),
        )
        return LinkWrite(created=True, weight=given)
    if weight is None or weight == held[0]:
        return LinkWrite(weight=held[0])
    conn.execute(f"UPDATE relations SET weight = ? {where}", (weight, *link))
    return LinkWrite(weight=weight, previous=held[0])


def supersedes_chain(conn: Connection, start: str, goal: str) -> tuple[str, ...]:
    """The ids of a supersedes chain from ``start`` to ``goal`` (empty when there is none)."""
    first = f"SELECT {conn.dialect.as_key('?')}, {conn.dialect.as_key('NULL')}"
    rows = conn.execute(
        # UNION (not UNION ALL) keeps each (memory, predecessor) pair once: at most one row per link.
        f"WITH RECURSIVE chain (id, parent) AS ({first} UNION "
        "SELECT r.to_id, r.from_id FROM relations r JOIN chain c ON r.from_id = c.id "
        "WHERE r.relation = 'supersedes') SELECT id, parent FROM chain",
        (start,),
    ).fetchall()
    parents: dict[str, str | None] = {}
    for memory_id, parent in rows:
        parents.setdefault(memory_id, parent)
    if goal not in parents:
        return ()
    path = [goal]
    while (step := parents[path[-1]]) is not None:
        path.append(step)
    return tuple(reversed(path))


def remove_links(conn: Connection, from_id: str, to_id: str, relation: str | None) -> list[str]:
    """Delete the links from ``from_id`` to ``to_id`` (only ``relation``, if given); returns the
    relations removed."""
    only = "" if relation is None else " AND relation = ?"
    rows = conn.execute(
        f"DELETE FROM relations WHERE from_id = ? AND to_id = ?{only} RETURNING relation",
        (from_id, to_id, *([] if relation is None else [relation])),
    ).fetchall()
    return sorted(row[0] for row in rows)


def superseded_by(conn: Connection, ids: Sequence[str]) -> dict[str, list[str]]:
    """For each of ``ids`` that another memory supersedes, those memories (oldest link first)."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        f"SELECT to_id, from_id FROM relations WHERE relation = 'supersedes' AND to_id IN ({marks}) "
        "ORDER BY created_at, from_id",
        ids,
    ).fetchall()
    successors: dict[str, list[str]] = {}
    for old, new in rows:
        successors.setdefault(old, []).append(new)
    return successors


def walk(conn: Connection, start: str, depth: int, relations: Sequence[str], limit: int) -> Neighbourhood:
    """Breadth first from ``start`` over links in both directions (only ``relations``, if any), up
    to ``depth`` hops and ``limit`` memories: the walk visits no more (``truncated`` says so), so
    its work is bounded whatever the depth. Each memory appears once, at its smallest depth, by the
    oldest link that reached it."""
    paths: dict[str, tuple[str, ...]] = {start: (start,)}
    found: list[Neighbour] = []
    frontier = [start]
    for level in range(1, depth + 1):
        if not frontier:
            break
        rows = _step(conn, frontier, list(paths), relations, limit - len(found) + 1)
        frontier = []
        for other, near, relation, direction, note, weight in rows:
            if len(found) == limit:
                return Neighbourhood(start, tuple(found), truncated=True)
            paths[other] = (*paths[near], other)
            found.append(Neighbour(other, relation, direction, note, level, paths[other], weight))
            frontier.append(other)
    return Neighbourhood(start, tuple(found), truncated=False)


def _step(
    conn: Connection,
    frontier: Sequence[str],
    seen: Sequence[str],
    relations: Sequence[str],
    limit: int,
) -> list[tuple[str, str, str, Direction, str | None, float]]:
    """One level of the walk: each memory linked to the frontier and not yet seen, once, by its
    oldest link (of links as old, the first by neighbour, relation and direction)."""
    near = ",".join("?" * len(frontier))
    known = ",".join("?" * len(seen))
    only = f"AND relation IN ({','.join('?' * len(relations))})" if relations else ""
    rows = conn.execute(
        "SELECT other, near, relation, direction, note, weight FROM (SELECT *, row_number() OVER ("
        "PARTITION BY other ORDER BY created_at, near, relation, direction) AS nth FROM ("
        "SELECT to_id AS other, from_id AS near, relation, 'outgoing' AS direction, note, weight, "
        f"created_at FROM relations WHERE from_id IN ({near}) {only} UNION ALL "
        "SELECT from_id, to_id, relation, 'incoming', note, weight, created_at "
        f"FROM relations WHERE to_id IN ({near}) {only}) AS links WHERE other NOT IN ({known})) AS firsts "
        f"WHERE nth = 1 ORDER BY created_at, other LIMIT {int(limit)}",
        (*frontier, *relations, *frontier, *relations, *seen),
    ).fetchall()
    return rows
