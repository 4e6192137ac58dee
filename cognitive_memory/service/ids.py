"""Short memory ids: answers may show a memory's id by its first characters, and every use case
that takes ids resolves them here, once, by the same rule, whichever transport called it.

A short id is the first ``SHORT_ID_CHARS`` characters of the id (more when another memory's id
starts the same way). Any id given as ``SHORT_ID_CHARS`` or more of the characters of a canonical
id (hex digits and '-', any case) stands for the one memory whose id starts with them: a whole id
stands for itself, a prefix that two memories share is refused (``ambiguous_id``), and one that
no memory has is passed on as given, so it is reported as missing or not found like any unknown id.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from cognitive_memory.errors import InvalidInputError
from cognitive_memory.system import CognitiveSystem

__all__ = [
    "SHORT_ID_CHARS",
    "resolve_memory_id",
    "resolve_memory_ids",
    "resolve_trashed_ids",
    "short_ids",
]

SHORT_ID_CHARS = 8
_ID_PREFIX = re.compile(rf"[0-9a-fA-F-]{{{SHORT_ID_CHARS},36}}")

Lookup = Callable[[str, int], list[str]]


def resolve_memory_ids(system: CognitiveSystem, memory_ids: Sequence[str]) -> list[str]:
    """``memory_ids`` with each short id replaced by the id of the stored memory it stands for."""
    return [_resolved(memory_id, system.browsing.ids_starting_with) for memory_id in memory_ids]


def resolve_memory_id(system: CognitiveSystem, memory_id: str) -> str:
    """The id of the stored memory ``memory_id`` stands for (itself when it stands for none)."""
    return _resolved(memory_id, system.browsing.ids_starting_with)


def resolve_trashed_ids(system: CognitiveSystem, memory_ids: Sequence[str]) -> list[str]:
    """``memory_ids`` with each short id replaced by the id of the trashed memory it stands for."""
    return [_resolved(memory_id, system.browsing.trashed_ids_starting_with) for memory_id in memory_ids]


def short_ids(system: CognitiveSystem, memory_ids: Iterable[str]) -> dict[str, str]:
    """Each stored memory's id by its short form: its first SHORT_ID_CHARS characters, or as many
    more as it takes to tell it from every other memory's id."""
    wanted = list(dict.fromkeys(memory_ids))
    lengths = system.browsing.unique_prefix_lengths(wanted)
    return {i: i[: max(SHORT_ID_CHARS, lengths.get(i, len(i)))] for i in wanted}


def _resolved(memory_id: str, starting_with: Lookup) -> str:
    if not _ID_PREFIX.fullmatch(memory_id):
        return memory_id
    found = starting_with(memory_id.lower(), 3)
    if len(found) > 1:
        named = ", ".join(found[:2]) + (", ..." if len(found) > 2 else "")
        raise InvalidInputError(
            f"`{memory_id}` is the start of more than one memory id ({named}): give more of the id.",
            code="ambiguous_id",
        )
    return found[0] if found else memory_id
