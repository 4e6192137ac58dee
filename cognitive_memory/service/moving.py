"""Moving the store of record: every memory, version, link, key, trash entry and source copied
into an empty store of the other kind (SQLite to PostgreSQL for a team, and back), the rows of
each table counted on both sides. The vector index is not moved: a server writes its index whole
from the new store at its first start (its record of changes belongs to the old one)."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel

from cognitive_memory.core.store import StoreOfRecord

__all__ = ["MoveResult", "format_move", "move_store"]

# What each table's rows are, as the answer names them.
_NAMES = {
    "memories": "memories",
    "memory_versions": "versions",
    "connections": "links",
    "relations": "named links",
    "sources": "loaded sources",
    "source_chunks": "loaded chunks",
    "trash": "trash entries",
}


class MoveResult(BaseModel):
    """What a move copied: rows of each table, checked equal on both sides."""

    success: bool = True
    source: str
    target: str
    rows: dict[str, int]
    message: str


def move_store(
    source: StoreOfRecord, target: StoreOfRecord, source_name: str, target_name: str, use: str
) -> MoveResult:
    """Copy ``source`` into the empty ``target`` (``StoreOfRecord.copy_into``); ``use``: the
    settings that make the servers use the target."""
    rows = source.copy_into(target)
    return MoveResult(
        source=source_name, target=target_name, rows=rows, message=_message(rows, target_name, use)
    )


def _message(rows: Mapping[str, int], target: str, use: str) -> str:
    counted = ", ".join(f"{rows[table]:,} {name}" for table, name in _NAMES.items() if table in rows)
    return (
        f"Moved {counted} into {target} (every table's rows counted on both sides). To use it, {use} "
        "and restart the servers; each writes its vector index again from it at its first start."
    )


def format_move(result: MoveResult) -> str:
    """The answer as text: what was moved, and how to use the new store."""
    return result.message
