"""Ids by their first characters: what a prefix stands for, and the shortest prefix that is unique."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing

import pytest

from cognitive_memory.storage.identifiers import ids_starting_with, unique_prefix_lengths

IDS = (
    "0aa11111-0000-4000-8000-000000000000",
    "5eed5eed-a1b2-4c3d-8e4f-000000000001",
    "5eed5eed-a1ff-4c3d-8e4f-000000000002",
    "ffffffff-ffff-4fff-bfff-ffffffffffff",
)


@pytest.fixture
def conn() -> Iterator[sqlite3.Connection]:
    with closing(sqlite3.connect(":memory:")) as connection:
        connection.execute("CREATE TABLE memories (id TEXT PRIMARY KEY)")
        connection.executemany("INSERT INTO memories VALUES (?)", [(i,) for i in IDS])
        yield connection


def test_a_prefix_stands_for_the_ids_that_start_with_it(conn: sqlite3.Connection) -> None:
    assert ids_starting_with(conn, "memories", "0aa11111", 2) == [IDS[0]]
    assert ids_starting_with(conn, "memories", "5eed5eed-a1", 2) == [IDS[1], IDS[2]]
    assert ids_starting_with(conn, "memories", IDS[3], 2) == [IDS[3]]
    assert ids_starting_with(conn, "memories", "12345678", 2) == []


def test_the_unique_length_is_one_more_than_the_nearest_id_shares(conn: sqlite3.Connection) -> None:
    lengths = unique_prefix_lengths(conn, "memories", IDS)
    assert lengths == {IDS[0]: 1, IDS[1]: 12, IDS[2]: 12, IDS[3]: 1}
    assert unique_prefix_lengths(conn, "memories", ["5eed0000-0000-4000-8000-000000000000"]) == {
        "5eed0000-0000-4000-8000-000000000000": 5
    }


def test_many_ids_at_once_each_get_their_length(conn: sqlite3.Connection) -> None:
    many = [f"{n:08x}-0000-4000-8000-000000000000" for n in range(0, 3000 * 4096, 4096)]
    conn.executemany("INSERT INTO memories VALUES (?)", [(i,) for i in many])

    lengths = unique_prefix_lengths(conn, "memories", [*many, many[0]])

    assert len(lengths) == len(many)
    assert {lengths[i] for i in many} == {5}  # ids 0x1000 apart differ in their fifth character
    assert unique_prefix_lengths(conn, "memories", []) == {}
