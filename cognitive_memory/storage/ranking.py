"""What recall ranks on: light rows of its candidates, read many at once (no JSON to parse, no
dates, no whole records), with the terms of each memory's own text (``storage/words.py``)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from cognitive_memory.core.memory import Vector
from cognitive_memory.core.terms import terms as text_terms

__all__ = ["RankingRow", "ranking_rows", "tags_as_words"]


class RankingRow(NamedTuple):
    """What ranking reads of a candidate (``timestamp`` and ``last_used``, its last access or else
    ``timestamp``, in seconds since the epoch; ``uses`` its access count), with the fields recall
    filters on. A named tuple, as immutable as a frozen dataclass: a recall makes about a hundred,
    and one takes 0.5 us to make against 2.9 us for the frozen dataclass it was."""

    id: str
    content: str
    importance_score: float
    uses: int
    last_used: float
    timestamp: float
    loader_type: str | None
    embedding: Vector
    project: str
    hierarchy_level: int
    memory_type: str
    tags_json: str
    speaker: str | None = None
    terms: frozenset[str] | None = None
    session_id: str | None = None

    def payload(self, *, with_tags: bool = True) -> dict[str, Any]:
        """The fields ``VectorFilter.matches`` reads, as the index's payload holds them (the tags,
        parsed from JSON, only when asked)."""
        return {
            "hierarchy_level": self.hierarchy_level,
            "memory_type": self.memory_type,
            "loader_type": self.loader_type,
            "tags": json.loads(self.tags_json) if with_tags else [],
            "project": self.project,
            "created_at": self.timestamp,
            "session_id": self.session_id,
        }


def tags_as_words(rows: Sequence[RankingRow]) -> list[RankingRow]:
    """``rows`` with each one's tags among its terms: a memory tagged ``concurrency`` holds that
    word for the floor's word share and the word bonus though its text never says it
    (docs/recall.md, tags). A row without tags is given back as it is."""
    return [row if len(row.tags_json) <= 2 else _with_tag_terms(row) for row in rows]


def _with_tag_terms(row: RankingRow) -> RankingRow:
    tags = json.loads(row.tags_json)
    if not tags:
        return row
    own = row.terms if row.terms is not None else frozenset(text_terms(row.content))
    return row._replace(terms=own | frozenset(text_terms(" ".join(tags))))


def ranking_rows(
    conn: sqlite3.Connection, ids: Sequence[str], dimension: int | None = None
) -> list[RankingRow]:
    """The rows of ``ids`` in the order given (unknown ids are skipped, and so are rows no command
    writes: JSON that does not parse, an embedding of another size than ``dimension`` numbers, or
    not made of 32-bit floats; ``memory_system doctor`` names those)."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    size = "length(embedding) = ?" if dimension else "length(embedding) % 4 = 0"
    rows = conn.execute(
        "SELECT id, content, importance_score, access_count, COALESCE(last_accessed, timestamp), "
        "timestamp, loader_type, embedding, project, hierarchy_level, memory_type, tags, "
        "speaker, w.terms, session_id FROM memories "
        f"LEFT JOIN memory_words w ON w.memory_rowid = memories.rowid WHERE id IN ({marks}) "
        f"AND typeof(embedding) = 'blob' AND {size} AND json_valid(metadata) AND json_valid(tags)",
        [*ids, *([4 * dimension] if dimension else [])],
    )
    by_id = {
        row[0]: RankingRow._make(
            (
                *row[:7],
                np.frombuffer(row[7], dtype="<f4"),
                *row[8:13],
                None if row[13] is None else frozenset(row[13].split()),
                row[14],
            )
        )
        for row in rows
    }
    return [by_id[i] for i in ids if i in by_id]
