"""Paging for list_memories: its orders, its page size, and the opaque cursor it hands out
(where the last page ended, for one order).

A cursor is url-safe base64 of ``{"o": order_by, "v": the last row's order value, "r": its rowid}``,
and ``"t": 1`` when that row was an exact match of a corrected text filter (listed first).
It carries no filters: given with other filters it is still a position, and the page is right.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from typing import Any, Literal, get_args

from cognitive_memory.core.store.values import PageKey
from cognitive_memory.errors import InvalidInputError

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "MAX_CURSOR_CHARS",
    "MAX_PAGE_SIZE",
    "ORDERS",
    "OrderBy",
    "checked_order",
    "checked_size",
    "decode_cursor",
    "encode_cursor",
]

# list_memories' orders, each newest or highest first.
OrderBy = Literal["created", "last_accessed", "importance", "access_count"]

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100
ORDERS: tuple[OrderBy, ...] = get_args(OrderBy)

# A cursor is under 100 characters; the bound keeps garbage from reaching the JSON parser.
MAX_CURSOR_CHARS = 200
# SQLite integers are signed 64-bit; a larger number cannot even be bound as a parameter.
_INT_LIMIT = 2**63


def checked_order(order_by: str) -> OrderBy:
    """``order_by`` if it is one of ORDERS; refused otherwise."""
    for known in ORDERS:
        if known == order_by:
            return known
    raise InvalidInputError(
        f"`order_by` {order_by!r} is not one of {', '.join(ORDERS)}.", code="invalid_value"
    )


def checked_size(limit: int) -> int:
    """``limit`` if a page can hold that many memories; refused otherwise."""
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise InvalidInputError(f"`limit` is 1 to {MAX_PAGE_SIZE}, not {limit}.", code="out_of_range")
    return limit


def encode_cursor(order_by: str, key: PageKey) -> str:
    """The cursor of the page that follows ``key`` in ``order_by``."""
    fields: dict[str, Any] = {"o": order_by, "v": key.value, "r": key.rowid}
    if key.tier:
        fields["t"] = key.tier
    text = json.dumps(fields, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode_cursor(cursor: str, order_by: str) -> PageKey:
    """The position ``cursor`` holds; refused unless it is one ``encode_cursor`` made for ``order_by``."""
    fields = _fields(cursor)
    if fields is None:
        raise InvalidInputError(
            "`cursor` is not a cursor list_memories returned (it may be truncated or edited): "
            "start again without a cursor.",
            code="invalid_cursor",
        )
    made_for, value, rowid, tier = fields
    if made_for != order_by:
        raise InvalidInputError(
            f"This cursor pages through order_by {made_for!r}, not {order_by!r}: pass the same order_by, "
            "or start again without a cursor.",
            code="invalid_cursor",
        )
    return PageKey(value, rowid, tier)


def _fields(cursor: str) -> tuple[str, float | None, int, int] | None:
    """(order_by, value, rowid, tier) of a well-formed cursor, else None."""
    if len(cursor) > MAX_CURSOR_CHARS:
        return None
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data: Any = json.loads(raw)
    except (binascii.Error, ValueError):
        return None
    if not isinstance(data, dict) or set(data) - {"t"} != {"o", "v", "r"}:
        return None
    made_for, value, rowid, tier = data["o"], data["v"], data["r"], data.get("t", 0)
    if not isinstance(made_for, str) or not _is_int(rowid) or not _is_value(value) or tier not in (0, 1):
        return None
    return made_for, value, rowid, int(tier)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -_INT_LIMIT <= value < _INT_LIMIT


def _is_value(value: Any) -> bool:
    if value is None or _is_int(value):
        return True
    return isinstance(value, float) and math.isfinite(value)
