"""What a set of memories holds, counted in the database: the tags in use and the sessions.

Each count is one grouped statement over the matching memories (never a statement per memory, tag
or session), whatever the store's size; an answer names at most ``size`` tags and sessions and
counts the rest.
"""

from __future__ import annotations

from typing import Any

from cognitive_memory.core.store.values import Overview, SessionSpan, TagCount
from cognitive_memory.index.vector_store import VectorFilter
from cognitive_memory.storage.browse import TextMatch, matching_sql
from cognitive_memory.storage.sql import Connection

__all__ = ["Overview", "SessionSpan", "TagCount", "overview_of"]


# One row per tag (NULL: the memories holding none, listed first), with how many tags there are in
# all (a window function: counted before LIMIT cuts the list). The memories' tag lists are grouped
# first, so each distinct list is parsed once (memories loaded together share theirs); the grouped
# lists are named ``memories`` so that the dialect's ``tags_list`` of ``memories.tags`` reads them.
_TAGS = (
    "SELECT tag, n, COUNT(*) OVER () FROM (SELECT item.value AS tag, SUM(memories.n) AS n FROM "
    "(SELECT tags, COUNT(*) AS n FROM memories WHERE {condition} GROUP BY tags) AS memories "
    "LEFT JOIN {items} ON TRUE GROUP BY item.value) AS tags "
    "ORDER BY tag IS NULL DESC, n DESC, tag LIMIT ?"
)
_SESSIONS = (
    "SELECT session_id, n, first, last, COUNT(*) OVER (), SUM(n) OVER () FROM (SELECT session_id, "
    "COUNT(*) AS n, MIN(timestamp) AS first, MAX(timestamp) AS last FROM memories "
    "WHERE {condition} GROUP BY session_id) AS sessions "
    "ORDER BY session_id IS NULL DESC, last DESC, session_id LIMIT ?"
)


def overview_of(conn: Connection, where: VectorFilter, text: TextMatch | None, size: int) -> Overview:
    """The tags and sessions of the memories matching ``where`` (and ``text``): two statements."""
    condition, params = matching_sql(where, text, conn.dialect)
    items = conn.dialect.list_items(conn.dialect.tags_list("memories.tags"), "item")
    tag_rows = conn.execute(_TAGS.format(condition=condition, items=items), [*params, size + 1]).fetchall()
    session_rows = conn.execute(_SESSIONS.format(condition=condition), [*params, size + 1]).fetchall()
    tag_groups = tag_rows[0][2] if tag_rows else 0
    # int(): PostgreSQL's SUM of integers is a numeric (a Decimal here), SQLite's an integer.
    groups, memories = (session_rows[0][4], int(session_rows[0][5])) if session_rows else (0, 0)
    untagged, tag_rows = _unset(tag_rows)
    without_session, session_rows = _unset(session_rows)
    tags, listed = tag_rows[:size], session_rows[:size]
    return Overview(
        tags=[TagCount(tag, int(n)) for tag, n, _ in tags],
        more_tags=tag_groups - (untagged > 0) - len(tags),
        untagged=untagged,
        sessions=[SessionSpan(*row[:4]) for row in listed],
        more_sessions=groups - (without_session > 0) - len(listed),
        more_session_memories=memories - without_session - sum(row[1] for row in listed),
        without_session=without_session,
    )


def _unset(rows: list[Any]) -> tuple[int, list[Any]]:
    """How many memories the leading NULL group holds (0: none), and the other rows."""
    if rows and rows[0][0] is None:
        return int(rows[0][1]), rows[1:]
    return 0, rows
