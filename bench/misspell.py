"""Misspelt queries for ``bench locomo --misspell`` and ``bench notes --misspell``.

Each query gets one or two of its content words (letters only, at least five, not a common
function word) misspelt by one realistic edit each: a letter dropped, doubled, swapped with the
next one, or replaced by a neighbouring key on a QWERTY keyboard. The first letter is left as
typed (people rarely mistype it). The edits are seeded by the query's own text, so every run
builds the same set, without a download.
"""

from __future__ import annotations

import random
import re

from cognitive_memory.core.spelling import KEYBOARD_NEIGHBOURS

__all__ = ["misspell"]

_WORD = re.compile(r"[A-Za-z]{5,}")
_COMMON = frozenset(
    [
        "about",
        "after",
        "again",
        "against",
        "before",
        "being",
        "below",
        "between",
        "could",
        "doing",
        "during",
        "other",
        "their",
        "there",
        "these",
        "those",
        "through",
        "under",
        "until",
        "which",
        "while",
        "would",
        "where",
        "whose",
        "what",
        "when",
        "with",
        "your",
        "yours",
    ]
)
EDITS = ("drop", "double", "swap", "neighbour")


def misspell(text: str, seed: str = "misspell") -> str:
    """``text`` with one or two of its content words misspelt (see the module docstring); the
    same text and seed give the same misspelling. A text without a content word is returned as
    it is."""
    rng = random.Random(f"{seed}:{text}")
    spans = [match.span() for match in _WORD.finditer(text) if match.group().lower() not in _COMMON]
    if not spans:
        return text
    chosen = sorted(rng.sample(spans, min(len(spans), rng.choice((1, 2)))), reverse=True)
    for start, end in chosen:
        text = text[:start] + _edit(text[start:end], rng) + text[end:]
    return text


def _edit(word: str, rng: random.Random) -> str:
    """One edit of ``word`` past its first letter, keeping its case."""
    at = rng.randrange(1, len(word) - 1)
    kind = rng.choice(EDITS)
    if kind == "drop":
        return word[:at] + word[at + 1 :]
    if kind == "double":
        return word[: at + 1] + word[at:]
    if kind == "swap" and word[at] != word[at + 1]:
        return word[:at] + word[at + 1] + word[at] + word[at + 2 :]
    letter = word[at]
    near = KEYBOARD_NEIGHBOURS.get(letter.lower(), "") or "e"
    typed = rng.choice(near)
    return word[:at] + (typed.upper() if letter.isupper() else typed) + word[at + 1 :]
