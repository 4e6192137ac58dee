"""list_memories' paging, pure: the SQLite store's cursor round trip and its refusals (cursors handed out
before they were the store's still read), orders, sizes, the SQL filter."""

from __future__ import annotations

import base64
import json

import pytest

from cognitive_memory.errors import InvalidInputError
from cognitive_memory.index import VectorFilter
from cognitive_memory.service.paging import checked_order, checked_size
from cognitive_memory.storage.browse import PageKey, filter_sql, page_key
from cognitive_memory.storage.dialect import SQLITE


def _forged(data: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode()


@pytest.mark.parametrize(
    "key",
    [
        PageKey(1714566615.123456, 42),
        PageKey(None, 7),
        PageKey(3, 1),
        PageKey(0.5, 2**62),
        PageKey(2.0, 5, tier=1),  # an exact match of a corrected text filter
    ],
)
def test_a_cursor_gives_back_the_position_it_was_made_from(key: PageKey) -> None:
    cursor = key.cursor("importance")

    assert page_key(cursor, "importance") == key
    assert cursor.isascii() and not set(cursor) & {"+", "/", "="}


@pytest.mark.parametrize(
    ("handed_out", "order_by", "key"),
    [
        ("eyJvIjoiY3JlYXRlZCIsInYiOjE3MDAwMDAwMTYuNSwiciI6MTZ9", "created", PageKey(1700000016.5, 16)),
        ("eyJvIjoiaW1wb3J0YW5jZSIsInYiOjAuNSwiciI6MywidCI6MX0", "importance", PageKey(0.5, 3, tier=1)),
        ("eyJvIjoibGFzdF9hY2Nlc3NlZCIsInYiOm51bGwsInIiOjd9", "last_accessed", PageKey(None, 7)),
    ],
)
def test_a_cursor_list_memories_handed_out_before_still_reads_and_is_made_alike(
    handed_out: str, order_by: str, key: PageKey
) -> None:
    assert page_key(handed_out, order_by) == key
    assert key.cursor(order_by) == handed_out


def test_a_cursor_made_for_another_order_is_refused_with_the_way_out() -> None:
    cursor = PageKey(1.0, 1).cursor("created")

    with pytest.raises(InvalidInputError) as refused:
        page_key(cursor, "importance")

    assert refused.value.code == "invalid_cursor"
    assert "'created'" in refused.value.message and "without a cursor" in refused.value.message


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "not a cursor",
        "eyJv",  # the first bytes of a real cursor
        "%%%%",
        "\x00\x01",
        "A" * 5000,
        _forged(["created", 1.0, 1]),
        _forged({"o": "created", "v": 1.0}),
        _forged({"v": 1.0, "r": 1}),
        _forged({"o": None, "v": 1.0, "r": 1}),
        _forged({"o": "created", "v": 1.0, "id": "3f2a"}),  # another store's position
        _forged({"o": "created", "v": 1.0, "r": 1, "extra": True}),
        _forged({"o": "created", "v": 1.0, "r": 1, "t": 2}),
        _forged({"o": "created", "v": 1.0, "r": 1, "t": "1"}),
        _forged({"o": "created", "v": "1.0", "r": 1}),
        _forged({"o": "created", "v": 1.0, "r": True}),
        _forged({"o": "created", "v": 1.0, "r": 1.5}),
        _forged({"o": "created", "v": 1.0, "r": 2**64}),
        _forged({"o": 3, "v": 1.0, "r": 1}),
        base64.urlsafe_b64encode(b'{"o": "created", "v": NaN, "r": 1}').decode(),
        base64.urlsafe_b64encode(b'{"o": "created", "v": Infinity, "r": 1}').decode(),
        base64.urlsafe_b64encode(b"\xff\xfe garbage").decode(),
    ],
)
def test_a_garbled_or_forged_cursor_is_refused(cursor: str) -> None:
    with pytest.raises(InvalidInputError) as refused:
        page_key(cursor, "created")

    assert refused.value.code == "invalid_cursor"
    assert "start again without a cursor" in refused.value.message


def test_orders_and_page_sizes_outside_their_range_are_refused() -> None:
    assert checked_order("access_count") == "access_count"
    assert (checked_size(1), checked_size(100)) == (1, 100)
    with pytest.raises(InvalidInputError, match="created, last_accessed, importance, access_count"):
        checked_order("random")
    for size in (0, 101, -1):
        with pytest.raises(InvalidInputError) as refused:
            checked_size(size)
        assert refused.value.code == "out_of_range"


def test_an_empty_filter_matches_everything() -> None:
    assert filter_sql(VectorFilter(), SQLITE) == ("TRUE", [])


def test_every_filter_field_becomes_a_bound_condition() -> None:
    where = VectorFilter(
        hierarchy_levels=(0, 2),
        memory_types=("semantic",),
        loader_types=("markdown",),
        tags=("ops", "'; DROP TABLE memories; --"),
        projects=("api", "global"),
        created_after=100.0,
        created_before=200.0,
    )

    sql, params = filter_sql(where, SQLITE)

    assert sql == (
        "hierarchy_level IN (?,?) AND memory_type IN (?) AND loader_type IN (?) AND project IN (?,?) "
        f"AND EXISTS (SELECT 1 FROM json_each({SQLITE.tags_list('memories.tags')}) AS tag "
        "WHERE tag.value IN (?,?)) "
        "AND timestamp >= ? AND timestamp < ?"
    )
    assert params == [
        0,
        2,
        "semantic",
        "markdown",
        "api",
        "global",
        "ops",
        "'; DROP TABLE memories; --",
        100.0,
        200.0,
    ]
