"""What recall ranks on: light rows of its candidates, read many at once (no JSON to parse, no
dates, no whole records), with the terms of each memory's own text (``storage/words.py``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from cognitive_memory.core.ranking import RankingRow
from cognitive_memory.core.terms import keyed_text
from cognitive_memory.storage.dialect import Dialect
from cognitive_memory.storage.sql import Connection
from cognitive_memory.storage.words import terms_of

__all__ = ["every_ranking_row", "ranking_rows"]


# The text (with its key) is read only for a memory whose terms were never kept
# (``memory_words``): it is tokenized then, as storing it would have.
_COLUMNS = (
    "SELECT id, importance_score, access_count, COALESCE(last_accessed, timestamp), "
    "timestamp, loader_type, embedding, project, hierarchy_level, memory_type, tags, "
    "speaker, w.terms, session_id, CASE WHEN w.terms IS NULL THEN content END, memory_key FROM memories "
    "LEFT JOIN memory_words w ON w.memory_rowid = memories.rowid "
)


def ranking_rows(conn: Connection, ids: Sequence[str], dimension: int | None = None) -> list[RankingRow]:
    """The rows of ``ids`` in the order given (unknown ids are skipped, and so are rows no command
    writes: JSON that does not parse, an embedding of another size than ``dimension`` numbers, or
    not made of 32-bit floats; ``memory_system doctor`` names those)."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        f"{_COLUMNS} WHERE id IN ({marks}) AND {_readable(conn.dialect, dimension)}",
        [*ids, *([4 * dimension] if dimension else [])],
    )
    by_id = {row[0]: _row(row) for row in rows}
    return [by_id[i] for i in ids if i in by_id]


def every_ranking_row(conn: Connection, dimension: int | None = None) -> Iterator[RankingRow]:
    """The row of every memory ``ranking_rows`` reads, in the order they were stored, read as they
    are taken."""
    rows = conn.execute(
        f"{_COLUMNS} WHERE {_readable(conn.dialect, dimension)} ORDER BY memories.rowid",
        [4 * dimension] if dimension else [],
    )
    return (_row(row) for row in rows)


def _readable(dialect: Dialect, dimension: int | None) -> str:
    size = "length(embedding) = ?" if dimension else "length(embedding) % 4 = 0"
    valid = f"{dialect.json_valid('metadata')} AND {dialect.json_valid('tags')}"
    return f"{dialect.holds_bytes('embedding')} AND {size} AND {valid}"


def _row(row: Any) -> RankingRow:
    terms = terms_of([keyed_text(row[14], row[15])])[0] if row[12] is None else frozenset(row[12].split())
    return RankingRow._make((*row[:6], np.frombuffer(row[6], dtype="<f4"), *row[7:12], terms, row[13]))
