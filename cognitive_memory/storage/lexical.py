"""BM25 over the lexical index (FTS5) with a bounded cost.

FTS5 ranks by computing BM25 for every row that holds a query word before it sorts: in a large
store a query of common words matches tens of thousands of rows, and that is most of a recall
(docs/performance.md: "Measurements behind the code"). So when the query's words occur in
more than LEXICAL_WINDOW memories, BM25 ranks the newest LEXICAL_WINDOW of them, and every
memory holding the query's rarest words (those whose matches together stay within
RARE_MATCHES) is ranked too, on those words alone (its score without the common words is a lower
bound of its full one: FTS5 recomputes its statistics on every lookup of a single row, so
scoring them on the whole query cost as much as scoring every match). Below the window nothing
changes: the benchmarks' stores never reach it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from cognitive_memory.core.spelling import QueryTerms
from cognitive_memory.storage import words as word_sql
from cognitive_memory.storage.associations import query_words, text_words
from cognitive_memory.storage.browse import TextMatch
from cognitive_memory.storage.corrections import corrected
from cognitive_memory.storage.database import Database
from cognitive_memory.storage.ranking import RankingRow
from cognitive_memory.storage.words import row_total

__all__ = ["CONTEXT_WEIGHT", "LEXICAL_WINDOW", "RARE_MATCHES", "Words", "search"]

# BM25 weight of a memory's temporal context (its neighbours' words) against its own words.
CONTEXT_WEIGHT = 0.3

LEXICAL_WINDOW = 10_000
RARE_MATCHES = 2_000

_BEST = (
    "SELECT rowid, -bm25(memory_fts, 1.0, ?) AS score FROM memory_fts "
    "WHERE memory_fts MATCH ? {} ORDER BY score DESC LIMIT ?"
)


def search(
    conn: sqlite3.Connection, terms: Sequence[tuple[str, float]], limit: int, context_weight: float
) -> list[tuple[str, float]]:
    """The ``limit`` best BM25 matches of the (term, weight) pairs as (memory id, score), best
    first. BM25 is a sum over the query's terms, so the terms of each weight are scored together
    and their scores added, each times its weight: a memory found through a correction (weight
    below 1) scores below one holding the word as typed, other things equal."""
    by_weight: dict[float, list[str]] = {}
    for term, weight in terms:
        by_weight.setdefault(weight, []).append(term)
    scores: dict[int, float] = {}
    for weight, words in by_weight.items():
        for rowid, score in _bm25(conn, words, limit, context_weight).items():
            scores[rowid] = scores.get(rowid, 0.0) + weight * score
    best = sorted(scores.items(), key=lambda item: item[1], reverse=True)[:limit]
    if not best:
        return []
    marks = ",".join("?" * len(best))
    ids = dict(conn.execute(f"SELECT rowid, id FROM memories WHERE rowid IN ({marks})", [r for r, _ in best]))
    return [(str(ids[rowid]), float(score)) for rowid, score in best if rowid in ids]


def _bm25(conn: sqlite3.Connection, words: list[str], limit: int, context_weight: float) -> dict[int, float]:
    """The ``limit`` best BM25 matches of any of ``words`` as rowid -> score, over a bounded
    window in a large store (see the module docstring)."""
    if not words:
        return {}
    expression = _any_of(words)
    # A store of at most LEXICAL_WINDOW memories cannot pass the window: its matches are not
    # walked a second time to find where the window starts.
    cut = (
        conn.execute(
            "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
            (expression, LEXICAL_WINDOW),
        ).fetchone()
        if row_total(conn) > LEXICAL_WINDOW
        else None
    )
    if cut is None:
        return dict(conn.execute(_BEST.format(""), (context_weight, expression, limit)).fetchall())
    newest = (context_weight, expression, cut[0], limit)
    scores = dict(conn.execute(_BEST.format("AND rowid > ?"), newest).fetchall())
    rare = _rarest(conn, words)
    if rare:
        older = conn.execute(_BEST.format("AND rowid <= ?"), (context_weight, _any_of(rare), cut[0], limit))
        scores |= dict(older.fetchall())
    return scores


def _any_of(words: list[str]) -> str:
    """Each word quoted (a literal: no user text is read as FTS5 syntax), OR-ed."""
    return " OR ".join(f'"{word}"' for word in words)


def _all_of(query: QueryTerms, corrected: bool = True) -> str:
    """An FTS5 expression for memories whose own text (not their neighbours') holds every word of
    ``query``: as typed, or (``corrected``) as one of its terms."""
    groups = (
        " OR ".join(f'"{term}"' for term, _ in (word.terms if corrected else word.terms[:1]))
        for word in query.words
    )
    return "content : (" + " AND ".join(f"({group})" for group in groups) + ")"


def _rarest(conn: sqlite3.Connection, words: list[str]) -> list[str]:
    """The query's rarest words that occur at all, rarest first, as long as their matches
    together stay within RARE_MATCHES (each count stops at RARE_MATCHES + 1 rows)."""
    counts = []
    for word in words:
        (count,) = conn.execute(
            "SELECT count(*) FROM (SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? LIMIT ?)",
            (_any_of([word]), RARE_MATCHES + 1),
        ).fetchone()
        if 0 < count <= RARE_MATCHES:
            counts.append((count, word))
    rare, total = [], 0
    for count, word in sorted(counts):
        if total + count > RARE_MATCHES:
            break
        rare.append(word)
        total += count
    return rare


class Words:
    """The lexical index of one database: a query's terms (corrected against the store's
    vocabulary), word search, its size, and word shares for ranking."""

    def __init__(self, database: Database) -> None:
        self._db = database

    def query_terms(self, text: str) -> QueryTerms:
        """The text's words, each with its corrections when the store does not know it
        (``core/spelling.py``): what ``search`` and ``shares`` take."""
        return self._db.read(lambda conn: corrected(conn, query_words(text)))

    def search(self, query: str | QueryTerms, limit: int) -> list[tuple[str, float]]:
        """BM25 over content (weight 1) and temporal context (weight CONTEXT_WEIGHT), best first, of
        the query's terms (a text is read with ``query_terms``); its cost stays bounded in a large
        store (see the module docstring)."""
        terms = self.query_terms(query) if isinstance(query, str) else query
        return self._db.read(lambda conn: search(conn, terms.pairs(), limit, CONTEXT_WEIGHT))

    def text_match(self, text: str) -> TextMatch | None:
        """What a list filter of ``text`` matches: memories whose own text holds each of its words
        (stopwords too), or one of that word's corrections; None when ``text`` holds no word."""
        words = text_words(text)
        if not words:
            return None
        terms = self._db.read(lambda conn: corrected(conn, words))
        return TextMatch(_all_of(terms, corrected=False), _all_of(terms) if terms.corrected else None)

    def document_counts(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """(memories in the store, how many hold each of ``terms`` in their text or their
        neighbours'): the counts the word shares weigh rarity by, point reads of the document
        frequencies (``storage/vocabulary.py``)."""
        return self._db.read(lambda conn: word_sql.document_counts(conn, terms))

    def row_total(self) -> int:
        """How many memories the lexical index holds (a point read of the count kept beside the
        document frequencies)."""
        return self._db.read(word_sql.row_total)

    def shares(self, query: str | QueryTerms, rows: Sequence[RankingRow]) -> dict[str, float]:
        """Each memory's share of the query's words, weighted by rarity (``storage/words.py``; a
        text is read with ``query_terms``); memories holding none of them are left out."""
        terms = self.query_terms(query) if isinstance(query, str) else query
        return self._db.read(lambda conn: self._shares(conn, terms, rows))

    def _shares(
        self, conn: sqlite3.Connection, query: QueryTerms, rows: Sequence[RankingRow]
    ) -> dict[str, float]:
        missing = [row for row in rows if row.terms is None]
        found = word_sql.terms_of([row.content for row in missing])
        terms = {row.id: row.terms for row in rows if row.terms is not None}
        terms |= {row.id: held for row, held in zip(missing, found, strict=True)}
        return word_sql.word_shares(conn, query, terms)
