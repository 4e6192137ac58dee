"""Spelling correction of a query's words against the store's own vocabulary (pure rules).

A query word whose term (after the lexical index's stemming) the store does not hold, or holds in
at most RARE memories while a near spelling is held DOMINANT times as often, gains the store's
terms at the smallest edit distance found (one edit from MIN_LENGTH letters, two from
LONG_LENGTH) as alternatives. Each weighs less than the word itself (WEIGHTS), so a memory found
through a correction never outranks one that holds the word as typed, other things equal.

The word search and the relevance floor's word shares read a query as ``QueryTerms``: each word
with the (term, weight) pairs that stand for it. Near spellings are found without a scan of the
vocabulary: a symmetric-delete index (``deletes``) keeps every term under each of its spellings
with one letter dropped, and a query term looks up its own spellings with one or two dropped;
``edit_distance`` then keeps the true neighbours.

Stems alone miss a typo that changes how a word stems: ``tokns`` stems to ``tokn`` (four letters,
never corrected), ``paginaton`` to itself, far from ``pagin`` (pagination). So a typed word of
MIN_LENGTH letters or more whose term the store holds rarely is also repaired before stemming: a
letter it lost put back, a doubled letter undoubled, two swapped neighbours put back (``repairs``,
``insertions``), and a repaired word whose term the store holds DOMINANT times as often counts as
a correction at one edit. A lost letter is found through the same delete index: the typed word's
beginnings (``beginnings``) are looked up in it, and each term it offers says where the letter
goes; only a letter lost past the term's end (in the suffix the stemmer cuts) is tried letter by
letter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "DOMINANT",
    "LONG_LENGTH",
    "MAX_CORRECTIONS",
    "KEYBOARD_NEIGHBOURS",
    "MIN_LENGTH",
    "RARE",
    "WEIGHTS",
    "QueryTerms",
    "QueryWord",
    "allowed_distance",
    "beginnings",
    "corrections",
    "deletes",
    "edit_distance",
    "indexed",
    "insertions",
    "repairable",
    "repaired",
    "repairs",
]

MIN_LENGTH = 5
LONG_LENGTH = 8
MAX_CORRECTIONS = 3
RARE = 1
DOMINANT = 20
# A correction's weight by its edit distance: below the word's own 1.0.
WEIGHTS: Mapping[int, float] = {1: 0.7, 2: 0.5}
_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
# Each letter's neighbours on a QWERTY keyboard: replacing a letter by one of them is one edit.
KEYBOARD_NEIGHBOURS: Mapping[str, str] = {
    key: "".join(
        other
        for other_row, others in enumerate(_ROWS)
        for column, other in enumerate(others)
        if other != key and abs(other_row - row) <= 1 and abs(column - index) <= 1
    )
    for row, keys in enumerate(_ROWS)
    for index, key in enumerate(keys)
}
_VOWELS = frozenset("aeiouy")
# The shortest beginning of a typed word looked up for a lost letter (a term of four letters and
# more: shorter ones have too many neighbours), and the most letters past a beginning that a lost
# letter is tried in, each letter a-z (the longest suffixes the stemmer cuts: ``icatons``).
_SHORTEST_BEGINNING = 4
_LONGEST_TAIL = 7
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
# Terms shorter or longer than these, or holding anything but letters a-z, are not in the delete
# index (migration 0015_vocabulary has the same rule).
_INDEXED_LENGTHS = (3, 64)


@dataclass(frozen=True, slots=True)
class QueryWord:
    """One word of a query and the terms that stand for it, as (term, weight): the word itself
    first at 1.0, then its corrections (stemmed terms of the store) below 1."""

    word: str
    terms: tuple[tuple[str, float], ...]


@dataclass(frozen=True, slots=True)
class QueryTerms:
    """A query's words, each with its alternatives (``QueryWord``)."""

    words: tuple[QueryWord, ...]

    @classmethod
    def exact(cls, words: list[str]) -> QueryTerms:
        """The words as typed, none corrected."""
        return cls(tuple(QueryWord(word, ((word, 1.0),)) for word in words))

    def pairs(self) -> list[tuple[str, float]]:
        """Every distinct term with its highest weight, in the query's order: what a word search
        takes (a sparse query vector would take the same pairs as its values' factors)."""
        best: dict[str, float] = {}
        for word in self.words:
            for term, weight in word.terms:
                best[term] = max(weight, best.get(term, 0.0))
        return list(best.items())

    @property
    def corrected(self) -> bool:
        """True when some word gained a correction."""
        return any(len(word.terms) > 1 for word in self.words)


def indexed(term: str) -> bool:
    """True when ``term`` belongs in the delete index (letters a-z only, three to 64)."""
    shortest, longest = _INDEXED_LENGTHS
    return shortest <= len(term) <= longest and term.isascii() and term.isalpha()


def allowed_distance(term: str) -> int:
    """How many edits a correction of ``term`` may be away: none for short or non-letter terms."""
    if not indexed(term) or len(term) < MIN_LENGTH:
        return 0
    return 2 if len(term) >= LONG_LENGTH else 1


def deletes(term: str, depth: int) -> set[str]:
    """``term``'s spellings with 1 to ``depth`` letters dropped (never shorter than two letters)."""
    found: set[str] = set()
    level = {term}
    for _ in range(depth):
        level = {t[:i] + t[i + 1 :] for t in level if len(t) > 2 for i in range(len(t))}
        found |= level
    return found


def edit_distance(a: str, b: str, limit: int) -> int:
    """The optimal-string-alignment distance between ``a`` and ``b``, or ``limit + 1`` once it
    exceeds ``limit``. A letter dropped or added, two neighbours swapped, a letter replaced by a
    neighbouring key or a vowel by a vowel: one edit each; any other replacement: two (a typo
    rarely hits a far key, and a real word one such letter away from another, "regarding" and
    "rewarding", is not a typo of it)."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous: list[int] = []
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        before, previous, row = previous, row, [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = _substitution(a[i - 1], b[j - 1])
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], before[j - 2] + 1)
        if min(row) > limit:
            return limit + 1
    return min(row[len(b)], limit + 1)


def _substitution(typed: str, meant: str) -> int:
    """The cost of ``typed`` standing for ``meant`` (see ``edit_distance``)."""
    if typed == meant:
        return 0
    near = meant in KEYBOARD_NEIGHBOURS.get(typed, "") or (typed in _VOWELS and meant in _VOWELS)
    return 1 if near else 2


def corrections(term: str, held: int, near: Mapping[str, int]) -> tuple[tuple[str, float], ...]:
    """The corrections of ``term`` (held by ``held`` memories) among ``near`` (the store's terms the
    delete index offers, each with how many memories hold it), as (term, weight): those at the
    smallest edit distance, most held first, at most MAX_CORRECTIONS. None for a term the store
    holds in more than RARE memories, or when no near spelling is held DOMINANT times as often."""
    limit = allowed_distance(term)
    if limit == 0 or held > RARE:
        return ()
    found: dict[str, tuple[int, int]] = {}
    for candidate, count in near.items():
        if candidate == term or count < DOMINANT * held or count <= 0:
            continue
        distance = edit_distance(term, candidate, limit)
        if distance <= limit:
            found[candidate] = (distance, count)
    if not found:
        return ()
    nearest = min(distance for distance, _ in found.values())
    best = sorted((c for c, (d, _) in found.items() if d == nearest), key=lambda c: (-found[c][1], c))
    return tuple((candidate, WEIGHTS[nearest]) for candidate in best[:MAX_CORRECTIONS])


def repairable(word: str) -> bool:
    """True when the typed ``word`` may be repaired: MIN_LENGTH letters a-z or more."""
    return len(word) >= MIN_LENGTH and indexed(word)


def repairs(word: str) -> set[str]:
    """``word``'s spellings with two neighbouring letters swapped or a doubled letter undoubled,
    its first letter kept (the repairs that need no look-up; none for a word not ``repairable``)."""
    if not repairable(word):
        return set()
    swapped = {word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in range(1, len(word) - 1)}
    undoubled = {word[:i] + word[i + 1 :] for i in range(1, len(word)) if word[i] == word[i - 1]}
    return (swapped | undoubled) - {word}


def beginnings(word: str) -> list[str]:
    """The beginnings of the typed ``word`` looked up in the delete index for a letter it lost: from
    four letters to the whole word (none for a word not ``repairable``)."""
    if not repairable(word):
        return []
    return [word[:end] for end in range(_SHORTEST_BEGINNING, len(word) + 1)]


def insertions(word: str, beginning: str, term: str) -> set[str]:
    """Spellings of ``word`` with one lost letter put back that may stem to ``term``, a term the delete
    index offered for ``word``'s ``beginning``: where ``beginning`` is ``term`` with a letter dropped,
    that letter in its place; where it is ``term`` itself (a longer one: MIN_LENGTH letters or
    more), any letter at any place past it, the suffix the stemmer cuts. The first letter stays."""
    if beginning == term:
        tail = len(word) - len(term)
        if len(term) < MIN_LENGTH or not 0 < tail <= _LONGEST_TAIL:
            return set()
        return {word[:i] + letter + word[i:] for i in range(len(term), len(word) + 1) for letter in _LETTERS}
    places = [i for i in range(1, len(term)) if term[:i] + term[i + 1 :] == beginning]
    return {word[:i] + term[i] + word[i:] for i in places}


def repaired(held: int, found: Mapping[str, int]) -> tuple[tuple[str, float], ...]:
    """The corrections a typed word's repairs give, from ``found`` (each repaired word's term with
    how many memories hold it; ``held``: how many hold the typed word's own term): the terms held
    DOMINANT times as often, most held first, at most MAX_CORRECTIONS, each at one edit's weight.
    None for a word the store holds in more than RARE memories."""
    if held > RARE:
        return ()
    kept = [t for t, count in found.items() if count > 0 and count >= DOMINANT * held]
    kept.sort(key=lambda t: (-found[t], t))
    return tuple((term, WEIGHTS[1]) for term in kept[:MAX_CORRECTIONS])
