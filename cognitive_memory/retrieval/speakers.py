"""Who said a memory: the speaker recorded when a turn of a conversation was stored.

A memory stored with a speaker (``context.speaker`` of ``store_memory``, ``--speaker`` of
``memory_system store``) is a turn of a conversation said by that person. A query that names the
speaker is more likely about what they said than about what others said to them (the boost's
measurement: docs/recall-experiments.md). Only recorded speakers count: a note that opens
with ``Warning:``, ``Note:`` or ``TODO:`` was said by nobody.
"""

from __future__ import annotations

import re

__all__ = ["names_speaker", "query_names"]

_WORD = re.compile(r"\w+")


def query_names(query: str) -> frozenset[str]:
    """The query's words, lower-cased: the speakers it could name."""
    return frozenset(word.lower() for word in _WORD.findall(query))


def names_speaker(speaker: str | None, names: frozenset[str]) -> bool:
    """True when the query (its ``names``) holds a word of the memory's recorded speaker."""
    if not speaker:
        return False
    return any(word.lower() in names for word in _WORD.findall(speaker))
