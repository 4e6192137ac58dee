"""Word evidence for recall's relevance floor: which of a query's words each memory holds,
weighted by how rare each word is in the store.

A word found in few memories says more than a common one, so each query word weighs its inverse
document frequency, ``ln((N - df + 0.5) / (df + 0.5) + 1)`` (BM25's, never negative); a word no
memory holds weighs the most. ``df`` counts the memories holding the word in their own text or
their neighbours' (the lexical index's rows, the sparse word vectors' documents), read from the
document frequencies kept beside the vocabulary (``storage/vocabulary.py``). A memory's word share
is the weight of the query words its own text holds (after the lexical index's stemming,
``core/terms.py``) over the weight of all of them: 1.0 when it holds every word, 0.0 when it holds
none. Unlike BM25 scores, the share means the same in a store of ten memories and of a million,
and a query about something the store never mentions gets a low share everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from cognitive_memory.core.spelling import QueryTerms
from cognitive_memory.core.terms import terms as text_terms
from cognitive_memory.storage import vocabulary
from cognitive_memory.storage.sql import Connection

__all__ = ["document_counts", "forget_terms", "remember_terms", "terms_of", "word_shares"]

_KEPT = "SELECT terms, context FROM memory_words WHERE memory_rowid = ?"


def terms_of(texts: Sequence[str]) -> list[frozenset[str]]:
    """Each text's distinct terms after the lexical index's tokenizer (``core/terms.py``)."""
    return [frozenset(text_terms(text)) for text in texts]


def remember_terms(conn: Connection, rowid: int, content: str, neighbours: Sequence[str]) -> None:
    """Keep the terms of a memory's own text (``content``: its text with its key,
    ``terms.keyed_text``) beside it (``memory_words``), so recall reads a candidate's terms with
    its row instead of tokenizing its text again, and those of its neighbours' texts
    (``neighbours``); the store's vocabulary counts the first, its document frequencies both
    (``storage/vocabulary.py``)."""
    own, *theirs = terms_of([content, *neighbours])
    context = frozenset().union(*theirs)
    row = conn.execute(_KEPT, (rowid,)).fetchone()
    conn.execute(
        "INSERT INTO memory_words (memory_rowid, terms, context) VALUES (?, ?, ?) "
        "ON CONFLICT (memory_rowid) DO UPDATE SET terms = excluded.terms, context = excluded.context",
        (rowid, " ".join(sorted(own)), " ".join(sorted(context))),
    )
    before = _document(row) if row else None
    vocabulary.count_terms(conn, str(row[0]).split() if row else (), own)
    vocabulary.count_documents(conn, before, own | context)


def forget_terms(conn: Connection, rowids: Sequence[int]) -> None:
    """Drop the kept terms of deleted memories, and their counts from the vocabulary and the
    document frequencies."""
    for rowid in rowids:
        row = conn.execute(_KEPT, (rowid,)).fetchone()
        if row is not None:
            vocabulary.count_terms(conn, str(row[0]).split(), ())
            vocabulary.count_documents(conn, _document(row), None)
            conn.execute("DELETE FROM memory_words WHERE memory_rowid = ?", (rowid,))


def _document(row: tuple[str, str]) -> set[str]:
    """A ``memory_words`` row's document terms: its own and its neighbours'."""
    return {*str(row[0]).split(), *str(row[1]).split()}


def document_counts(conn: Connection, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
    """(memories in the store, how many hold each of ``terms`` in their own text or their
    neighbours'): point reads of the document frequencies."""
    found = vocabulary.frequencies(conn, sorted(set(terms)))
    return vocabulary.documents(conn), {term: found.get(term, 0) for term in terms}


def word_shares(
    conn: Connection,
    query: QueryTerms,
    terms: Mapping[str, frozenset[str]],
    counts: tuple[int, Mapping[str, int]] | None = None,
) -> dict[str, float]:
    """Each memory's word share of the query's words (see the module docstring), from its terms
    (``terms``: id -> the terms of its text, as ``terms_of`` gives them); memories that hold none
    of the words are left out. A corrected word (``core/spelling.py``) weighs as rare as its most
    held spelling, and a memory holding a correction gets the correction's weight of it, or all of
    it when no memory holds the word as typed (nothing then outranks the correction).
    ``counts``: the ``document_counts`` of the query's terms, when the caller read them already."""
    if not query.words or not terms:
        return {}
    spellings = list(dict.fromkeys(term for word in query.words for term, _ in word.terms))
    stems = dict(zip(spellings, terms_of(spellings), strict=True))
    known = sorted(set().union(*stems.values()))
    total, frequency = document_counts(conn, known) if counts is None else counts
    slots = []
    for word in query.words:
        options = [(stems[term], weight) for term, weight in word.terms]
        # A word the tokenizer splits is a phrase: as rare as its rarest term at most.
        dfs = [min((frequency.get(term, 0) for term in held), default=0) for held, _ in options]
        if len(options) > 1 and dfs[0] == 0:
            # No memory holds the word as typed: its corrections are all it can mean.
            options = [(held, 1.0) for held, _ in options]
        df = max(dfs)
        slots.append((options, math.log((total - df + 0.5) / (df + 0.5) + 1.0)))
    whole = sum(weight for _, weight in slots)
    if whole <= 0:
        return {}
    shares = {}
    for memory_id, held in terms.items():
        # sum(idf * max(w of the options held, default 0)), written out: a recall scores some
        # hundred memories, and generators cost more than the arithmetic (the same floats).
        weight = 0.0
        for options, idf in slots:
            best = 0.0
            for needed, w in options:
                if w > best and needed and needed <= held:
                    best = w
            weight += idf * best
        if weight > 0:
            shares[memory_id] = weight / whole
    return shares
