"""What the sparse word vectors are weighted from: each memory's text with its temporal
neighbours' texts (the lexical index's two columns, content and context), and the store's
average length, read from the counts FTS5 keeps.

The vectors are weighted against a reference average length kept in ``store_meta``
(``WEIGHTING_AVERAGE``): every vector shares it, so the only error is the distance between it and
the store's true average, which ``index/sparse.drifted`` bounds; a rebuild of the index from SQLite
takes the true average as the new reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from cognitive_memory.core.store.values import WordDocument
from cognitive_memory.core.terms import keyed_text
from cognitive_memory.index.sparse import drifted
from cognitive_memory.storage.indexed_words import begin_reweigh
from cognitive_memory.storage.properties import keep
from cognitive_memory.storage.sql import Connection, DatabaseAccess

__all__ = ["WEIGHTING_AVERAGE", "WordDocument", "WordDocuments", "average_length"]

# The store_meta key of the average length the sparse vectors are weighted with.
WEIGHTING_AVERAGE = "word_average_length"
# Ids per query: SQLite binds at most 32,766 parameters.
_BATCH = 1_000
# FTS5's averages record in memory_fts_data: rows, then the tokens of each column.
_AVERAGES = 1


class WordDocuments:
    """The texts the word vectors are weighted from, and the average length they share."""

    def __init__(self, database: DatabaseAccess) -> None:
        self._db = database

    def of(self, ids: Sequence[str]) -> dict[str, WordDocument]:
        """Each existing memory's document, in one read (of ``_BATCH`` ids at a time)."""
        found: dict[str, WordDocument] = {}
        for start in range(0, len(ids), _BATCH):
            found |= self._db.read(partial(_documents, ids=ids[start : start + _BATCH]))
        return found

    def weighting_average(self) -> float:
        """The reference average length (see the module docstring); the store's current one,
        kept from now on, when none is kept yet."""
        kept = self._db.rows("SELECT value FROM store_meta WHERE key = ?", (WEIGHTING_AVERAGE,))
        if kept:
            return float(kept[0][0])
        return self.reweigh()

    def drifted(self) -> bool:
        """True when the store's average length has moved from the reference by more than
        ``sparse.AVERAGE_DRIFT`` (both read at once); a store keeping none takes its current one."""
        kept, current = self._db.read(_averages)
        if kept is None:
            self.reweigh()
            return False
        return drifted(kept, current)

    def current_average(self) -> float:
        """The store's average combined length now (a point read of FTS5's counts)."""
        return self._db.read(average_length)

    def reweigh(self, *, in_background: bool = False) -> float:
        """Take the store's current average as the reference (before every vector is weighted
        again, as a rebuild does); returns it. ``in_background``: the same transaction starts the
        pass that weighs every memory's words again (``storage/indexed_words.py``)."""
        average = self.current_average()
        with self._db.transaction() as conn:
            keep(conn, WEIGHTING_AVERAGE, repr(average))
            if in_background:
                begin_reweigh(conn)
        return average


def _averages(conn: Connection) -> tuple[float | None, float]:
    """(the reference average length, or None when none is kept yet; the current one)."""
    kept = conn.execute("SELECT value FROM store_meta WHERE key = ?", (WEIGHTING_AVERAGE,)).fetchone()
    return (float(kept[0]) if kept else None), average_length(conn)


def _documents(conn: Connection, ids: Sequence[str]) -> dict[str, WordDocument]:
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        "SELECT m.id, m.content, m.memory_key, n.id, n.content FROM memories m "
        "LEFT JOIN connections c ON c.source_id = m.id AND c.kind = 'temporal' "
        f"LEFT JOIN memories n ON n.id = c.target_id WHERE m.id IN ({marks}) ORDER BY m.id, n.rowid",
        list(ids),
    )
    texts: dict[str, tuple[str, list[str], list[str]]] = {}
    for memory_id, content, key, neighbour_id, neighbour in rows:
        _, neighbours, neighbour_ids = texts.setdefault(memory_id, (keyed_text(content, key), [], []))
        if neighbour_id is not None:
            neighbours.append(neighbour)
            neighbour_ids.append(neighbour_id)
    return {
        memory_id: WordDocument(content, tuple(neighbours), tuple(neighbour_ids))
        for memory_id, (content, neighbours, neighbour_ids) in texts.items()
    }


def average_length(conn: Connection) -> float:
    """The average of own tokens + neighbours' tokens (``sparse.combined_length``) over the lexical
    index's rows, from FTS5's averages record (0.0 for an empty store). SQLite's full-text index
    alone; on PostgreSQL, from the lengths its stand-in keeps (``associations.write_lexical_entry``)."""
    if conn.dialect.postgres:
        rows, total = conn.execute("SELECT count(*), sum(content + context) FROM memory_lengths").fetchone()
        return float(total) / rows if rows else 0.0
    row = conn.execute("SELECT block FROM memory_fts_data WHERE id = ?", (_AVERAGES,)).fetchone()
    if row is None or not isinstance(row[0], bytes):
        return 0.0
    numbers = _varints(row[0], 3)
    if len(numbers) < 3 or numbers[0] == 0:
        return 0.0
    rows, content, context = numbers
    return (content + context) / rows


def _varints(data: bytes, count: int) -> list[int]:
    """The first ``count`` SQLite varints of ``data`` (big-endian 7-bit groups, a set high bit
    means more follow, a ninth byte gives all 8 bits); fewer if ``data`` ends first."""
    numbers: list[int] = []
    position = 0
    while len(numbers) < count and position < len(data):
        value = 0
        for index in range(9):
            if position >= len(data):
                return numbers
            byte = data[position]
            position += 1
            if index == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        numbers.append(value)
    return numbers
