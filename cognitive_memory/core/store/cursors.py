"""The opaque cursor of a page of memories (``MemoryRecords.browse``): the store of record makes it
and reads it back; the use cases and their callers only pass it on.

A cursor is url-safe base64 (unpadded) of a JSON object: ``"o"``, the order it pages through, beside
the store's own position fields (SQLite's are its last row's order value, rowid and tier:
``storage/browse.py``; another store names its own). Cursors handed out so far have exactly this
form, so they keep paging. A cursor that is not one, or whose fields are not the store's, is
refused with ``invalid_cursor``; one made for another order too, naming it.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from cognitive_memory.errors import InvalidInputError

__all__ = ["MAX_CURSOR_CHARS", "bad_cursor", "cursor_of", "position_in"]

# A cursor is under 100 characters; the bound keeps garbage from reaching the JSON parser.
MAX_CURSOR_CHARS = 200


def cursor_of(order_by: str, position: Mapping[str, Any]) -> str:
    """The cursor that resumes after ``position`` (the store's fields, none named "o") in ``order_by``."""
    text = json.dumps({"o": order_by, **position}, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def position_in(cursor: str, order_by: str, names: frozenset[str]) -> dict[str, Any]:
    """The store's fields ``cursor`` holds, for ``order_by``: each of ``names`` may be there, no
    other. Refused unless it is a cursor, and one made for ``order_by``."""
    fields = _fields(cursor)
    if fields is None or not isinstance(made_for := fields.pop("o", None), str) or set(fields) - names:
        raise bad_cursor()
    if made_for != order_by:
        raise InvalidInputError(
            f"This cursor pages through order_by {made_for!r}, not {order_by!r}: pass the same order_by, "
            "or start again without a cursor.",
            code="invalid_cursor",
        )
    return fields


def bad_cursor() -> InvalidInputError:
    """The refusal of a cursor that no page returned (the store's fields in it are not its own)."""
    return InvalidInputError(
        "`cursor` is not a cursor a page of memories returned (it may be truncated or edited): "
        "start again without a cursor.",
        code="invalid_cursor",
    )


def _fields(cursor: str) -> dict[str, Any] | None:
    """The JSON object a well-formed cursor holds, else None."""
    if len(cursor) > MAX_CURSOR_CHARS:
        return None
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data: Any = json.loads(raw)
    except (binascii.Error, ValueError):
        return None
    return data if isinstance(data, dict) else None
