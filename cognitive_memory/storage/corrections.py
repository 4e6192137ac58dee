"""A query's words corrected against the store's vocabulary: the query-side step that turns them
into ``QueryTerms`` ((term, weight) pairs per word) for the word search and the relevance floor.

Each word is stemmed by the lexical index's tokenizer; a stem the vocabulary holds in at most
``spelling.RARE`` memories looks up its near spellings in the delete index
(``storage/vocabulary.py``) and keeps those ``spelling.corrections`` chooses. A correction is a
stem of the store, searched by a word the tokenizer turns into that very stem: the stem itself, or
the stem with an ``e`` (Porter stems ``database`` to ``databas``, which it would stem again to
``databa``); a stem neither gives is dropped.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from cognitive_memory.core.spelling import RARE, QueryTerms, QueryWord, allowed_distance, corrections
from cognitive_memory.storage import vocabulary
from cognitive_memory.storage.words import terms_of

__all__ = ["corrected"]


def corrected(conn: sqlite3.Connection, words: Sequence[str]) -> QueryTerms:
    """``words`` (a query's, as ``query_words`` gives them) with their corrections: a few point
    reads of the vocabulary when some word is rare in the store, none of it otherwise."""
    own = terms_of(words)
    stems = {word: next(iter(held)) for word, held in zip(words, own, strict=True) if len(held) == 1}
    wanted = sorted({stem for stem in stems.values() if allowed_distance(stem)})
    counts = vocabulary.held(conn, wanted) if wanted else {}
    rare = [stem for stem in wanted if counts.get(stem, 0) <= RARE]
    if not rare:
        return QueryTerms.exact(list(words))
    near = vocabulary.near(conn, rare)
    found = {stem: corrections(stem, counts.get(stem, 0), near[stem]) for stem in rare}
    spelt = _spellings(conn, sorted({term for pairs in found.values() for term, _ in pairs}))
    return QueryTerms(
        tuple(
            QueryWord(
                word,
                ((word, 1.0), *((spelt[t], w) for t, w in found.get(stems.get(word, ""), ()) if t in spelt)),
            )
            for word in words
        )
    )


def _spellings(conn: sqlite3.Connection, stems: list[str]) -> dict[str, str]:
    """A word for each of ``stems`` that the tokenizer turns into exactly that stem: the stem
    itself, else the stem with an ``e``; a stem neither gives is left out."""
    forms = [(stem, form) for stem in stems for form in (stem, stem + "e")]
    found: dict[str, str] = {}
    for (stem, form), held in zip(forms, terms_of([form for _, form in forms]), strict=True):
        if held == {stem}:
            found.setdefault(stem, form)
    return found
