"""BM25 over the lexical index (FTS5): recall's word search where the vector index does not
answer it (the index is down, ``RetrievalConfig.words_in_index`` off), plain BM25
over every match, and the text filter of ``list_memories``. FTS5 scores every row that holds a
query word before it sorts, so its cost grows with the matches; the vector index's does not.

SQLite's full-text index alone, as are the other statements that touch it, each behind a function
named for its purpose: ``associations.write_lexical_entry`` (a memory's words),
``rows.delete_lexical_entries``, ``browse.matching_rowids`` (a text filter), ``search`` here, and
``word_documents.average_length`` (the averages FTS5 keeps). The expressions they match are
FTS5's (``_any_of``, ``_all_of``). On PostgreSQL each of them does without: ``search`` finds
nothing (word search is the vector index's alone), the entries keep only their lengths in terms
(``memory_lengths``, the average's source) and a text filter matches a memory's kept terms
(``memory_words.terms``) through the schema's ``lexical_match`` (``storage/postgres/migrations.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cognitive_memory.core.ranking import RankingRow
from cognitive_memory.core.spelling import QueryTerms
from cognitive_memory.storage import vocabulary
from cognitive_memory.storage import words as word_sql
from cognitive_memory.storage.associations import query_words, text_words
from cognitive_memory.storage.browse import TextMatch
from cognitive_memory.storage.corrections import corrected
from cognitive_memory.storage.indexed_words import IndexedWords
from cognitive_memory.storage.sql import Connection, DatabaseAccess

__all__ = ["CONTEXT_WEIGHT", "Words", "search"]

# BM25 weight of a memory's temporal context (its neighbours' words) against its own words.
CONTEXT_WEIGHT = 0.3

_BEST = (
    "SELECT rowid, -bm25(memory_fts, 1.0, ?) AS score FROM memory_fts "
    "WHERE memory_fts MATCH ? ORDER BY score DESC LIMIT ?"
)


def search(
    conn: Connection, terms: Sequence[tuple[str, float]], limit: int, context_weight: float
) -> list[tuple[str, float]]:
    """The ``limit`` best BM25 matches of the (term, weight) pairs as (memory id, score), best
    first. BM25 is a sum over the query's terms, so the terms of each weight are scored together
    and their scores added, each times its weight: a memory found through a correction (weight
    below 1) scores below one holding the word as typed, other things equal. Each weight keeps
    only its own ``limit`` best before the sum, so a memory outside one weight's best gets nothing
    from it; the index scores the whole query at once and adds every part (docs/recall-experiments.md,
    round 6: one LoCoMo question turns on this). PostgreSQL has no
    full-text index: its word search is the vector index's alone, and this finds nothing."""
    if conn.dialect.postgres:
        return []
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


def _bm25(conn: Connection, words: list[str], limit: int, context_weight: float) -> dict[int, float]:
    """The ``limit`` best BM25 matches of any of ``words`` as rowid -> score."""
    if not words:
        return {}
    return dict(conn.execute(_BEST, (context_weight, _any_of(words), limit)).fetchall())


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


class Words:
    """The lexical index of one database: a query's terms (corrected against the store's
    vocabulary), word search and word shares for ranking."""

    def __init__(self, database: DatabaseAccess, indexed: IndexedWords) -> None:
        self._db = database
        self._indexed = indexed

    def query_terms(self, text: str) -> QueryTerms:
        """The text's words, each with its corrections when the store does not know it
        (``core/spelling.py``): what ``search`` and ``shares`` take."""
        return self._db.read(lambda conn: corrected(conn, query_words(text)))

    def search(self, query: str | QueryTerms, limit: int) -> list[tuple[str, float]]:
        """BM25 over content (weight 1) and temporal context (weight CONTEXT_WEIGHT), best first, of
        the query's terms (a text is read with ``query_terms``), every match scored (the terms of
        each weight summed over their ``limit`` best: see ``search``)."""
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

    def held(self, terms: Sequence[str]) -> dict[str, int]:
        """How many memories hold each of ``terms`` in their own text (the vocabulary's counts,
        which decide whether a query's word is corrected; 0 for a term none holds)."""
        found = self._db.read(lambda conn: vocabulary.held(conn, sorted(set(terms))))
        return {term: found.get(term, 0) for term in terms}

    def in_index(self) -> bool:
        """True when the vector index holds every memory's words (``indexed_words``; cached)."""
        return self._indexed.complete()

    def shares(
        self,
        query: str | QueryTerms,
        rows: Sequence[RankingRow],
        counts: tuple[int, Mapping[str, int]] | None = None,
    ) -> dict[str, float]:
        """Each memory's share of the query's words, weighted by rarity (``storage/words.py``; a
        text is read with ``query_terms``; ``counts``: the ``document_counts`` of its terms, when
        the caller read them already); memories holding none of them are left out."""
        terms = self.query_terms(query) if isinstance(query, str) else query
        held = {row.id: row.terms for row in rows}
        return self._db.read(lambda conn: word_sql.word_shares(conn, terms, held, counts))
