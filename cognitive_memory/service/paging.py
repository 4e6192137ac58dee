"""Paging for list_memories: its orders, its page size, and the bound on the cursor it hands out.

The cursor is opaque here: the store of record makes it (where the last page ended, for one order)
and reads it back (``core/store/cursors.py``); list_memories only passes it on. It carries no
filters: given with other filters it is still a position, and the page is right.
"""

from __future__ import annotations

from typing import Literal, get_args

from cognitive_memory.core.store.cursors import MAX_CURSOR_CHARS
from cognitive_memory.errors import InvalidInputError

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "MAX_CURSOR_CHARS",
    "MAX_PAGE_SIZE",
    "ORDERS",
    "OrderBy",
    "checked_order",
    "checked_size",
]

# list_memories' orders, each newest or highest first.
OrderBy = Literal["created", "last_accessed", "importance", "access_count"]

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100
ORDERS: tuple[OrderBy, ...] = get_args(OrderBy)


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
