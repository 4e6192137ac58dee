"""Memory ids by their first characters: the ids a prefix stands for, and the shortest prefix of
an id that no other id of the table shares. Both are seeks on the table's index of ids."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from cognitive_memory.storage.sql import Connection

__all__ = ["IdTable", "ids_starting_with", "unique_prefix_lengths"]

# The tables whose ids are looked up (their names go into the SQL, so only these).
IdTable = Literal["memories", "trash"]
# Above every character of a canonical id (hex digits and '-'): the end of a prefix's range.
_AFTER_ID_CHARACTERS = "g"


def ids_starting_with(conn: Connection, table: IdTable, prefix: str, limit: int) -> list[str]:
    """Up to ``limit`` distinct ids of ``table`` that start with ``prefix`` (lower-case hex and '-')."""
    rows = conn.execute(
        f"SELECT DISTINCT id FROM {table} WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
        (prefix, prefix + _AFTER_ID_CHARACTERS, limit),
    ).fetchall()
    return [row[0] for row in rows]


def unique_prefix_lengths(conn: Connection, table: IdTable, ids: Sequence[str]) -> dict[str, int]:
    """For each id, how many of its first characters no other id of ``table`` starts with: one
    more than it shares with the ids just before and just after it in order."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return {}
    # One statement for all of them: its two seeks per id cost less than a statement per id.
    rows = conn.execute(
        f"WITH wanted(id) AS (VALUES {','.join(['(?)'] * len(wanted))}) SELECT wanted.id, "
        f"(SELECT max(id) FROM {table} WHERE id < wanted.id), "
        f"(SELECT min(id) FROM {table} WHERE id > wanted.id) FROM wanted",
        wanted,
    )
    lengths = {}
    for memory_id, before, after in rows:
        shared = max(_common_length(memory_id, other) for other in (before or "", after or ""))
        lengths[memory_id] = min(shared + 1, len(memory_id))
    return lengths


def _common_length(first: str, second: str) -> int:
    length = 0
    for a, b in zip(first, second, strict=False):
        if a != b:
            break
        length += 1
    return length
