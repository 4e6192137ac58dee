"""Typed user links between memories: the relation names and the checks a link request passes."""

from __future__ import annotations

from collections.abc import Sequence

from cognitive_memory.core.validation import check_text
from cognitive_memory.errors import InvalidInputError

__all__ = [
    "MAX_DEPTH",
    "MAX_NOTE_CHARS",
    "RELATED_LIMIT",
    "RELATIONS",
    "check_depth",
    "check_ends",
    "check_note",
    "check_relation",
    "check_relations",
    "cycle_message",
]

RELATIONS = ("relates_to", "supersedes", "contradicts", "caused_by", "example_of", "part_of")
MAX_DEPTH = 3
MAX_NOTE_CHARS = 1000
# ``related`` returns at most this many memories (and says it stopped early).
RELATED_LIMIT = 200


def check_relation(value: object, *, field: str = "relation") -> str:
    if not isinstance(value, str) or value not in RELATIONS:
        raise InvalidInputError(
            f"`{field}` is {value!r}; use one of {', '.join(RELATIONS)}.", code="invalid_value"
        )
    return value


def check_relations(values: Sequence[str] | None) -> tuple[str, ...]:
    """The relation names to follow, each once, in the order given (empty: all)."""
    return tuple(dict.fromkeys(check_relation(value, field="relations[]") for value in values or ()))


def check_depth(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError("`depth` must be a whole number from 1 to 3.", code="invalid_type")
    if not 1 <= value <= MAX_DEPTH:
        raise InvalidInputError(f"`depth` is {value}; it must be from 1 to {MAX_DEPTH}.", code="out_of_range")
    return value


def check_note(value: str | None) -> str | None:
    """The note stripped, or None for no note (a blank note is no note)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return check_text(value, field="note", limit=MAX_NOTE_CHARS)


def check_ends(from_id: object, to_id: object) -> tuple[str, str]:
    """Both ids as strings, refusing a link from a memory to itself."""
    for name, value in (("from_id", from_id), ("to_id", to_id)):
        if not isinstance(value, str) or not value:
            raise InvalidInputError(
                f"`{name}` must be a memory id (a non-empty string).", code="invalid_type"
            )
    if from_id == to_id:
        raise InvalidInputError(
            f"A memory cannot be linked to itself ({from_id}): give two different ids.", code="invalid_value"
        )
    return str(from_id), str(to_id)


def cycle_message(from_id: str, to_id: str, chain: Sequence[str]) -> str:
    """Why ``from_id`` supersedes ``to_id`` is refused: ``chain`` already leads from one to the other."""
    return (
        f"{from_id} cannot supersede {to_id}: {to_id} already supersedes it "
        f"({' supersedes '.join(chain)}), and a memory cannot be newer than itself. Remove the older link "
        "first (unlink_memories), or use another relation."
    )
