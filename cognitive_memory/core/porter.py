"""The Porter stemmer exactly as SQLite's FTS5 ``porter`` tokenizer runs it.

Recall's words are matched in two places that must agree: SQLite FTS5 (``porter unicode61``,
the lexical index) and the sparse word vectors of the vector index. FTS5's stemmer departs from
Martin Porter's reference in small ways, kept here on purpose: it works on the token's UTF-8
bytes (a byte outside ASCII is a consonant), tokens shorter than 3 bytes or longer than 64 pass
through unchanged, a ``y`` counts as a vowel wherever it is not the first letter when a stem is
asked whether it holds a vowel (``*v*``), and of each step's suffixes only the first that ends the
word is tried (a failed condition does not fall through to a shorter suffix).
``tests/unit/test_terms.py`` checks it against SQLite itself.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["stem"]

_MAX_TOKEN = 64
_VOWELS = frozenset(b"aeiou")
_Y = ord("y")

Condition = Callable[[bytes], bool]


def _is_vowel(byte: int, y_is_vowel: bool) -> bool:
    return byte in _VOWELS or (y_is_vowel and byte == _Y)


def _after_vowel_consonant(word: bytes, previous_consonant: bool) -> int:
    """The length of the shortest prefix of ``word`` that holds a vowel followed by a consonant,
    or 0; ``y`` is a vowel after a consonant (``previous_consonant`` for the byte before ``word``)."""
    consonant = previous_consonant
    index = 0
    while index < len(word):
        consonant = not _is_vowel(word[index], consonant)
        if not consonant:
            break
        index += 1
    for position in range(index + 1, len(word)):
        consonant = not _is_vowel(word[position], consonant)
        if consonant:
            return position + 1
    return 0


def _measure_above_0(stem: bytes) -> bool:
    return _after_vowel_consonant(stem, False) > 0


def _measure_above_1(stem: bytes) -> bool:
    first = _after_vowel_consonant(stem, False)
    return first > 0 and _after_vowel_consonant(stem[first:], True) > 0


def _measure_is_1(stem: bytes) -> bool:
    first = _after_vowel_consonant(stem, False)
    return first > 0 and _after_vowel_consonant(stem[first:], True) == 0


def _ends_cvc(stem: bytes) -> bool:
    """``*o``: consonant, vowel, consonant at the end, the last not w, x or y."""
    if stem[-1] in b"wxy":
        return False
    mask, consonant = 0, False
    for byte in stem:
        consonant = not _is_vowel(byte, consonant)
        mask = (mask << 1) + consonant
    return (mask & 0b111) == 0b101


def _has_vowel(stem: bytes) -> bool:
    return any(_is_vowel(byte, index > 0) for index, byte in enumerate(stem))


def _above_1_after_s_or_t(stem: bytes) -> bool:
    return stem[-1:] in (b"s", b"t") and _measure_above_1(stem)


# (suffix, condition on the stem before it, replacement), in FTS5's order of trial.
Rule = tuple[bytes, Condition, bytes]


def _rules(condition: Condition, pairs: str) -> list[Rule]:
    """Rules sharing one condition from "suffix>replacement" words."""
    rules = []
    for pair in pairs.split():
        suffix, _, replacement = pair.partition(">")
        rules.append((suffix.encode(), condition, replacement.encode()))
    return rules


_STEP_2 = _rules(
    _measure_above_0,
    "ational>ate tional>tion enci>ence anci>ance izer>ize logi>log bli>ble alli>al entli>ent eli>e "
    "ousli>ous ization>ize ation>ate ator>ate alism>al iveness>ive fulness>ful ousness>ous aliti>al "
    "iviti>ive biliti>ble",
)
_STEP_3 = _rules(_measure_above_0, "ical>ic ness> icate>ic iciti>ic ful> ative> alize>al")
_STEP_4 = [
    *_rules(_measure_above_1, "al> ance> ence> er> ic> able> ible> ant> ement> ment> ent>"),
    (b"ion", _above_1_after_s_or_t, b""),
    *_rules(_measure_above_1, "ou> ism> ate> iti> ous> ive> ize>"),
]


def _apply(word: bytes, rules: list[Rule]) -> tuple[bytes, bool]:
    """The first rule whose suffix ends ``word`` (leaving at least one byte before it) is tried:
    (the word after it, whether its condition held)."""
    for suffix, condition, replacement in rules:
        if len(word) > len(suffix) and word.endswith(suffix):
            stem = word[: -len(suffix)]
            return (stem + replacement, True) if condition(stem) else (word, False)
    return word, False


def _step_1a(word: bytes) -> bytes:
    if not word.endswith(b"s"):
        return word
    if word[-2:-1] == b"e":
        if (len(word) > 4 and word[-4:-2] == b"ss") or (len(word) > 3 and word[-3:-2] == b"i"):
            return word[:-2]
        return word[:-1]
    return word if word[-2:-1] == b"s" else word[:-1]


def _step_1b(word: bytes) -> bytes:
    if len(word) > 3 and word.endswith(b"eed"):
        return word[:-1] if _measure_above_0(word[:-3]) else word
    for suffix in (b"ed", b"ing"):
        if len(word) > len(suffix) and word.endswith(suffix):
            stem = word[: -len(suffix)]
            return _step_1b_tidy(stem) if _has_vowel(stem) else word
    return word


def _step_1b_tidy(stem: bytes) -> bytes:
    for suffix, longer in ((b"at", b"ate"), (b"bl", b"ble"), (b"iz", b"ize")):
        if len(stem) > 2 and stem.endswith(suffix):
            return stem[:-2] + longer
    last = stem[-1]
    if len(stem) > 1 and not _is_vowel(last, False) and last not in b"lsz" and last == stem[-2]:
        return stem[:-1]
    if _measure_is_1(stem) and _ends_cvc(stem):
        return stem + b"e"
    return stem


def _stem_bytes(word: bytes) -> bytes:
    word = _step_1b(_step_1a(word))
    if word.endswith(b"y") and _has_vowel(word[:-1]):
        word = word[:-1] + b"i"
    for rules in (_STEP_2, _STEP_3, _STEP_4):
        word, _ = _apply(word, rules)
    if word.endswith(b"e"):
        stem = word[:-1]
        if _measure_above_1(stem) or (_measure_is_1(stem) and not _ends_cvc(stem)):
            word = stem
    if len(word) > 1 and word.endswith(b"ll") and _measure_above_1(word[:-1]):
        word = word[:-1]
    return word


def stem(token: str) -> str:
    """The token (lower-case, as the tokenizer folds it) after FTS5's Porter stemmer."""
    data = token.encode()
    if not 3 <= len(data) <= _MAX_TOKEN:
        return token
    return _stem_bytes(data).decode()
