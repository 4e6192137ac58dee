"""Typed user links between memories: the relation names, weights and the checks a link request
passes.

A relation is one of the documented names (``RELATIONS``, what each means is in docs/tools.md) or
the caller's own name within ``RELATION_RULE``; either is folded like a key (NFKC, case folding),
with spaces and hyphens made ``_``, so ``Depends-On`` is ``depends_on``. Two names keep a meaning
of their own in ranking: ``supersedes`` orders a newer memory before the one it replaces (and may
not form a cycle); every other relation, ``contradicts`` included, only connects.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from cognitive_memory.core.validation import check_text, fold_key
from cognitive_memory.errors import InvalidInputError

__all__ = [
    "Graph",
    "DEFAULT_WEIGHT",
    "MAX_DEPTH",
    "MAX_NOTE_CHARS",
    "MAX_RELATION_CHARS",
    "RELATED_LIMIT",
    "RELATIONS",
    "RELATION_RULE",
    "check_depth",
    "check_ends",
    "check_note",
    "check_relation",
    "check_relations",
    "check_weight",
    "cycle_message",
]

# Each memory's linked memories and the weight of the link, as activation spreads over them (the
# store of record and the link table kept in memory give the same shape).
Graph = dict[str, list[tuple[str, float]]]

# The documented relations, the seeds' among them; any other name within RELATION_RULE is allowed.
RELATIONS = (
    "relates_to",
    "similar",
    "depends_on",
    "part_of",
    "example_of",
    "caused_by",
    "contradicts",
    "supersedes",
)
MAX_RELATION_CHARS = 40
RELATION_RULE = f"2-{MAX_RELATION_CHARS} of a-z, 0-9 and _, starting with a letter"
_RELATION = re.compile(rf"[a-z][a-z0-9_]{{1,{MAX_RELATION_CHARS - 1}}}")
# A link's weight in activation spreading when none is given: a link someone made on purpose is
# stronger evidence of relatedness than a co-recall or a link between files, weaker than the 1.0
# of the nearest neighbour in time.
DEFAULT_WEIGHT = 0.8
MAX_DEPTH = 5
MAX_NOTE_CHARS = 1000
# ``related`` visits at most this many memories, whatever the depth (and says when it stopped).
RELATED_LIMIT = 200


def check_relation(value: object, *, field: str = "relation") -> str:
    """The relation name folded (``Depends-On``: ``depends_on``), or why it cannot name one."""
    folded = fold_key(value.strip()).replace(" ", "_").replace("-", "_") if isinstance(value, str) else ""
    if _RELATION.fullmatch(folded):
        return folded
    raise InvalidInputError(
        f"`{field}` is {str(value)[:60]!r}; use one of {', '.join(RELATIONS)}, or a name of your own: "
        f"{RELATION_RULE}.",
        code="invalid_value",
    )


def check_relations(values: Sequence[str] | None) -> tuple[str, ...]:
    """The relation names to follow, each once, in the order given (empty: all)."""
    return tuple(dict.fromkeys(check_relation(value, field="relations[]") for value in values or ()))


def check_weight(value: object) -> float | None:
    """A link's weight from 0 to 1, or None for the default (``DEFAULT_WEIGHT``)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInputError("`weight` must be a number from 0 to 1.", code="invalid_type")
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise InvalidInputError(f"`weight` is {value}; it must be from 0 to 1.", code="out_of_range")
    return float(value)


def check_depth(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(f"`depth` must be a whole number from 1 to {MAX_DEPTH}.", code="invalid_type")
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
