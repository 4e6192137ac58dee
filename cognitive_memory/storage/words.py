"""Word evidence for recall's relevance floor: which of a query's words each memory holds,
weighted by how rare each word is in the store.

A word found in few memories says more than a common one, so each query word weighs its inverse
document frequency, ``ln((N - df + 0.5) / (df + 0.5) + 1)`` (BM25's, never negative); a word no
memory holds weighs the most. A memory's word share is the weight of the query words its own text
holds (after the lexical index's stemming) over the weight of all of them: 1.0 when it holds every
word, 0.0 when it holds none. Unlike BM25 scores, the share means the same in a store of ten
memories and of a million, and a query about something the store never mentions gets a low share
everywhere.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from cognitive_memory.core.spelling import QueryTerms
from cognitive_memory.storage import vocabulary

__all__ = ["TermCounts", "forget_terms", "prepare", "remember_terms", "row_total", "terms_of", "word_shares"]

# The lexical index's tokenizer (migration 0002_lexical_index_and_connections): the query's words
# go through the same one, so "running" in a query finds "runs" in a memory as the index does.
_TOKENIZER = "porter unicode61 remove_diacritics 2"


def prepare(conn: sqlite3.Connection) -> None:
    """Create the connection's temporary tables: a scratch index (contentless: it keeps only
    terms) that stems the query's words and the candidates' texts, a view of its terms, and a view
    of the lexical index's terms. Temporary: nothing is written to the memory database."""
    conn.executescript(
        f"""
        CREATE VIRTUAL TABLE IF NOT EXISTS temp.scratch_terms
            USING fts5(text, content = '', tokenize = '{_TOKENIZER}');
        CREATE VIRTUAL TABLE IF NOT EXISTS temp.scratch_instances
            USING fts5vocab(temp, scratch_terms, 'instance');
        CREATE VIRTUAL TABLE IF NOT EXISTS temp.memory_terms USING fts5vocab(main, memory_fts, 'row');
        """
    )


def terms_of(conn: sqlite3.Connection, texts: Sequence[str]) -> list[frozenset[str]]:
    """Each text's distinct terms after the lexical index's tokenizer (one scratch pass)."""
    if not texts:
        return []
    conn.execute("INSERT INTO temp.scratch_terms (scratch_terms) VALUES ('delete-all')")
    conn.executemany(
        "INSERT INTO temp.scratch_terms (rowid, text) VALUES (?, ?)", list(enumerate(texts, start=1))
    )
    terms: dict[int, set[str]] = {}
    for doc, term in conn.execute("SELECT doc, term FROM temp.scratch_instances"):
        terms.setdefault(int(doc), set()).add(str(term))
    return [frozenset(terms.get(n, ())) for n in range(1, len(texts) + 1)]


def remember_terms(conn: sqlite3.Connection, rowid: int, content: str) -> None:
    """Keep the terms of a memory's own text beside it (``memory_words``), so recall reads a
    candidate's terms with its row instead of tokenizing its text again; the store's vocabulary
    counts them (``storage/vocabulary.py``)."""
    (terms,) = terms_of(conn, [content])
    row = conn.execute("SELECT terms FROM memory_words WHERE memory_rowid = ?", (rowid,)).fetchone()
    conn.execute(
        "INSERT OR REPLACE INTO memory_words (memory_rowid, terms) VALUES (?, ?)",
        (rowid, " ".join(sorted(terms))),
    )
    vocabulary.count_terms(conn, str(row[0]).split() if row else (), terms)


def forget_terms(conn: sqlite3.Connection, rowids: Sequence[int]) -> None:
    """Drop the kept terms of deleted memories, and their counts from the vocabulary."""
    for rowid in rowids:
        row = conn.execute("SELECT terms FROM memory_words WHERE memory_rowid = ?", (rowid,)).fetchone()
        if row is not None:
            vocabulary.count_terms(conn, str(row[0]).split(), ())
            conn.execute("DELETE FROM memory_words WHERE memory_rowid = ?", (rowid,))


# Terms whose counts a connection keeps at most (then it starts over).
_KEPT_COUNTS = 50_000
# FTS5's own records in memory_fts_data: row and token totals, and the segment structure.
_AVERAGES, _STRUCTURE = 1, 10


@dataclass
class TermCounts:
    """How many memories hold each term, kept between recalls while the lexical index is unchanged.

    FTS5 counts a term's memories by walking its whole list of rows, at every recall, a cost
    that grows with the store. The counts are kept until the index's structure record changes
    (FTS5 rewrites it in every transaction that writes to the index).
    """

    _stamp: bytes | None = None
    _counts: dict[str, int] = field(default_factory=dict)

    def of(self, conn: sqlite3.Connection, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """(memories in the index, how many hold each of ``terms``)."""
        records = dict(
            conn.execute("SELECT id, block FROM memory_fts_data WHERE id IN (?, ?)", (_AVERAGES, _STRUCTURE))
        )
        structure = records.get(_STRUCTURE)
        stamp = structure if isinstance(structure, bytes) else None
        if stamp is None or stamp != self._stamp or len(self._counts) > _KEPT_COUNTS:
            self._counts.clear()
            self._stamp = stamp
        missing = [term for term in terms if term not in self._counts]
        if missing:
            marks = ",".join("?" * len(missing))
            found = dict(
                conn.execute(f"SELECT term, doc FROM temp.memory_terms WHERE term IN ({marks})", missing)
            )
            self._counts |= {term: int(found.get(term, 0)) for term in missing}
        counts = {term: self._counts[term] for term in terms}
        averages = records.get(_AVERAGES)
        return _total(conn, averages if isinstance(averages, bytes) else None), counts


def word_shares(
    conn: sqlite3.Connection,
    query: QueryTerms,
    terms: Mapping[str, frozenset[str]],
    counts: TermCounts | None = None,
) -> dict[str, float]:
    """Each memory's word share of the query's words (see the module docstring), from its terms
    (``terms``: id -> the terms of its text, as ``terms_of`` gives them); memories that hold none
    of the words are left out. A corrected word (``core/spelling.py``) weighs as rare as its most
    held spelling, and a memory holding a correction gets the correction's weight of it.
    ``counts`` keeps term counts between calls on this connection."""
    if not query.words or not terms:
        return {}
    spellings = list(dict.fromkeys(term for word in query.words for term, _ in word.terms))
    stems = dict(zip(spellings, terms_of(conn, spellings), strict=True))
    known = sorted(set().union(*stems.values()))
    total, frequency = (counts or TermCounts()).of(conn, known)
    slots = []
    for word in query.words:
        options = [(stems[term], weight) for term, weight in word.terms]
        # A word the tokenizer splits is a phrase: as rare as its rarest term at most.
        df = max(min((frequency.get(term, 0) for term in held), default=0) for held, _ in options)
        slots.append((options, math.log((total - df + 0.5) / (df + 0.5) + 1.0)))
    whole = sum(weight for _, weight in slots)
    if whole <= 0:
        return {}
    shares = {}
    for memory_id, held in terms.items():
        weight = sum(
            idf * max((w for needed, w in options if needed and needed <= held), default=0.0)
            for options, idf in slots
        )
        if weight > 0:
            shares[memory_id] = weight / whole
    return shares


def row_total(conn: sqlite3.Connection) -> int:
    """How many rows the lexical index holds (one per memory), read from the count FTS5 keeps
    in its averages record (rowid 1 of ``memory_fts_data``, a varint first) instead of counting
    rows, a cost that grows with the store; counted when that record cannot be read."""
    return _total(conn, _averages(conn))


def _averages(conn: sqlite3.Connection) -> bytes | None:
    """The lexical index's averages record, or None when there is none to read."""
    row = conn.execute("SELECT block FROM memory_fts_data WHERE id = ?", (_AVERAGES,)).fetchone()
    return row[0] if row is not None and isinstance(row[0], bytes) else None


def _total(conn: sqlite3.Connection, record: bytes | None) -> int:
    total = None if record is None else _varint(record)
    if total is not None:
        return total
    (counted,) = conn.execute("SELECT count(*) FROM memories").fetchone()
    return int(counted)


def _varint(data: bytes) -> int | None:
    """SQLite's varint at the start of ``data``: big-endian 7-bit groups, a set high bit means
    more follow; a ninth byte gives all 8 bits. None if ``data`` ends first."""
    value = 0
    for index, byte in enumerate(data[:9]):
        if index == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value
    return None
