"""A text's terms as the lexical index makes them: FTS5's ``porter unicode61 remove_diacritics 2``.

The lexical index (SQLite FTS5) and the sparse word vectors of the vector index must turn a text
into the same terms, or a word found by one would be missed by the other. So the rules are FTS5's:
a token is a run of letters and digits (Unicode categories L*, N* and Co; in ASCII only
``[0-9A-Za-z]``: an underscore separates), folded to lower case with the diacritics of Latin
letters removed (``é`` -> ``e``), then stemmed by FTS5's Porter stemmer (``core/porter.py``).
``tests/unit/test_terms.py`` checks the terms against SQLite's own.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from cognitive_memory.core.porter import stem

__all__ = ["keyed_text", "terms", "tokens"]

# An ASCII text's tokens: in ASCII a token character is exactly a letter or a digit.
_ASCII_TOKEN = re.compile(r"[0-9a-z]+")
# Unassigned code points (Cn) too: FTS5's tables are older than Python's, and a character they do
# not know is a token character.
_TOKEN_CATEGORIES = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Nl", "No", "Co", "Cn"})
# The combining marks FTS5 takes as part of a token (and drops): those of Latin letters.
_DIACRITICS = frozenset(
    [
        *range(0x300, 0x305),
        *range(0x306, 0x30D),
        0x30F,
        0x311,
        0x31B,
        *range(0x323, 0x329),
        0x32D,
        0x32E,
        0x330,
        0x331,
    ]
)
# The letters FTS5 strips of diacritics (remove_diacritics 2): the Latin blocks.
_LATIN = ((0x00C0, 0x024F), (0x1E00, 0x1EFF))


def _is_token_char(char: str) -> bool:
    if char < "\x80":
        return char.isalnum()
    return unicodedata.category(char) in _TOKEN_CATEGORIES


def _is_diacritic(char: str) -> bool:
    """A combining mark: part of the token it follows, dropped by the folding."""
    return ord(char) in _DIACRITICS


@lru_cache(maxsize=4096)
def _fold(char: str) -> str:
    """One non-ASCII token character in lower case, a Latin letter without its diacritics."""
    folded = char.casefold()
    if len(folded) != 1:
        folded = char.lower() if len(char.lower()) == 1 else char
    if any(start <= ord(char) <= end for start, end in _LATIN):
        parts = unicodedata.normalize("NFD", char)
        base, marks = parts[0], parts[1:]
        if marks and base < "\x80" and all(unicodedata.combining(mark) for mark in marks):
            return base.lower()
    return folded


def tokens(text: str) -> list[str]:
    """The text's tokens in order, folded (lower case, Latin diacritics removed), not stemmed."""
    if text.isascii():
        return _ASCII_TOKEN.findall(text.lower())
    found: list[str] = []
    current: list[str] = []
    for char in text:
        if char < "\x80":
            if char.isalnum():
                current.append(char.lower())
                continue
        elif _is_token_char(char):
            current.append(_fold(char))
            continue
        elif current and _is_diacritic(char):
            continue
        if current:
            found.append("".join(current))
            current = []
    if current:
        found.append("".join(current))
    return found


def terms(text: str) -> list[str]:
    """The text's terms in order (repeats kept): its tokens after FTS5's Porter stemmer."""
    return [_stem(token) for token in tokens(text)]


@lru_cache(maxsize=65536)
def _stem(token: str) -> str:
    return stem(token)


def keyed_text(content: str, key: str | None) -> str:
    """A memory's own words as one text: its content, then its key (``memory_key``) on a line of
    its own, so the key's words are the memory's (``database-choice``: database, choice) in the
    lexical index, the kept terms and the sparse word vectors alike. Without a key, the content."""
    return content if key is None else f"{content}\n{key}"
