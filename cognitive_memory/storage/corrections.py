"""A query's words corrected against the store's vocabulary: the query-side step that turns them
into ``QueryTerms`` ((term, weight) pairs per word) for the word search and the relevance floor.

Each word is stemmed by the lexical index's tokenizer; a stem the vocabulary holds in at most
``spelling.RARE`` memories looks up its near spellings in the delete index
(``storage/vocabulary.py``) and keeps those ``spelling.corrections`` chooses. A typed word of
``spelling.MIN_LENGTH`` letters or more whose stem is that rare is also repaired before stemming
(``spelling.repairs``: a swap or a doubled letter put right; ``spelling.insertions``: a lost letter
put back where the delete index, asked for the word's beginnings, says), and the repaired words
whose stems the vocabulary holds are kept as ``spelling.repaired`` chooses. A correction is a
stem of the store, searched by a word the tokenizer turns into that very stem: the stem itself,
or the stem with an ``e`` (Porter stems ``database`` to ``databas``, which it would stem again to
``databa``), or else the repaired word that gave it; a stem none gives is dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cognitive_memory.core.spelling import (
    MAX_CORRECTIONS,
    RARE,
    QueryTerms,
    QueryWord,
    allowed_distance,
    beginnings,
    corrections,
    insertions,
    repairable,
    repaired,
    repairs,
)
from cognitive_memory.storage import vocabulary
from cognitive_memory.storage.sql import Connection
from cognitive_memory.storage.words import terms_of

__all__ = ["asked_stems", "corrected", "needs_correcting"]

Pairs = tuple[tuple[str, float], ...]


def asked_stems(words: Sequence[str]) -> dict[str, str]:
    """The words of ``words`` that a correction could stand for (word -> its one stem): those
    whose stem is long enough to have near spellings, or that could be repaired. How many memories
    hold each stem (the vocabulary's count) decides whether the word is corrected: at most
    ``spelling.RARE``."""
    own = terms_of(words)
    stems = {word: next(iter(held)) for word, held in zip(words, own, strict=True) if len(held) == 1}
    return {word: stem for word, stem in stems.items() if allowed_distance(stem) or repairable(word)}


def needs_correcting(asked: Mapping[str, str], counts: Mapping[str, int]) -> bool:
    """Whether some word of ``asked`` (``asked_stems``) is rare in the store, by ``counts`` (the
    vocabulary's count of each stem; a stem left out is held by no memory)."""
    return any(counts.get(stem, 0) <= RARE for stem in asked.values())


def corrected(conn: Connection, words: Sequence[str]) -> QueryTerms:
    """``words`` (a query's, as ``query_words`` gives them) with their corrections: a few point
    reads of the vocabulary when some word is rare in the store, none of it otherwise."""
    asked = asked_stems(words)
    counts = vocabulary.held(conn, sorted(set(asked.values()))) if asked else {}
    rare = {word: stem for word, stem in asked.items() if counts.get(stem, 0) <= RARE}
    if not rare:
        return QueryTerms.exact(list(words))
    near_stems = sorted({stem for stem in rare.values() if allowed_distance(stem)})
    near = vocabulary.near(conn, near_stems)
    found = {stem: corrections(stem, counts.get(stem, 0), near[stem]) for stem in near_stems}
    fixes, forms = _repaired(conn, {word: stem for word, stem in rare.items() if repairable(word)}, counts)
    chosen = {word: _merged(found.get(stem, ()), fixes.get(word, ())) for word, stem in rare.items()}
    spelt = forms | _spellings(conn, sorted({term for pairs in chosen.values() for term, _ in pairs}))
    return QueryTerms(
        tuple(
            QueryWord(word, ((word, 1.0), *((spelt[t], w) for t, w in chosen.get(word, ()) if t in spelt)))
            for word in words
        )
    )


def _merged(near: Pairs, fixed: Pairs) -> Pairs:
    """A word's corrections from its stem's near spellings, then from its repairs, each term once,
    at most MAX_CORRECTIONS."""
    merged = dict(near)
    for term, weight in fixed:
        merged.setdefault(term, weight)
    return tuple(merged.items())[:MAX_CORRECTIONS]


def _repaired(
    conn: Connection, words: Mapping[str, str], counts: Mapping[str, int]
) -> tuple[dict[str, Pairs], dict[str, str]]:
    """The corrections the repairs of ``words`` (typed word -> its own stem, held ``counts`` times)
    give, and a repaired word for each stem they name (how it is searched when neither the stem
    nor the stem with an ``e`` gives it)."""
    tried = {word: repairs(word) for word in words}
    begun: dict[str, set[str]] = {}
    for word in words:
        for beginning in beginnings(word):
            begun.setdefault(beginning, set()).add(word)
    for beginning, terms in vocabulary.offered(conn, sorted(begun)).items():
        for word in begun[beginning]:
            for term in terms:
                tried[word] |= insertions(word, beginning, term)
    every = sorted(set().union(*tried.values()))
    stem_of = {f: next(iter(own)) for f, own in zip(every, terms_of(every), strict=True) if len(own) == 1}
    held = vocabulary.held(conn, sorted(set(stem_of.values())))
    fixes: dict[str, Pairs] = {}
    forms: dict[str, str] = {}
    for word, stem in words.items():
        useful = held.keys() - {stem}
        options = {stem_of[f]: held[stem_of[f]] for f in tried[word] if stem_of.get(f, stem) in useful}
        fixes[word] = repaired(counts.get(stem, 0), options)
        forms |= {stem_of[f]: f for f in sorted(tried[word], reverse=True) if f in stem_of}
    return fixes, forms


def _spellings(conn: Connection, stems: list[str]) -> dict[str, str]:
    """A word for each of ``stems`` that the tokenizer turns into exactly that stem: the stem
    itself, else the stem with an ``e``; a stem neither gives is left out."""
    forms = [(stem, form) for stem in stems for form in (stem, stem + "e")]
    found: dict[str, str] = {}
    for (stem, form), held in zip(forms, terms_of([form for _, form in forms]), strict=True):
        if held == {stem}:
            found.setdefault(stem, form)
    return found
