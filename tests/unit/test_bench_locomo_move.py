"""bench/locomo_move.py: the counts of two stores compared name by name, and each conversation's
database named on the server of the URL given."""

from __future__ import annotations

from bench.locomo_move import compare_counts, database_url


def test_equal_counts_compare_equal() -> None:
    counts = {"memories": 419, "connections/co_recall": 1200, "trash": 0}
    assert compare_counts(counts, dict(counts)) == []


def test_each_differing_or_missing_count_is_named_once_in_order() -> None:
    before = {"memories": 419, "connections/co_recall": 1200, "trash": 1}
    after = {"memories": 419, "connections/co_recall": 1199, "relations/supersedes": 2}
    assert compare_counts(before, after) == [
        "connections/co_recall: 1200 vs 1199",
        "relations/supersedes: 0 vs 2",
        "trash: 1 vs 0",
    ]


def test_a_conversation_database_keeps_the_user_password_host_and_socket_of_the_url() -> None:
    assert (
        database_url("postgresql://cm:s%40cret@db.example:5433/postgres?sslmode=require", "cm_move_conv_26")
        == "postgresql://cm:s%40cret@db.example:5433/cm_move_conv_26?sslmode=require"
    )
    assert (
        database_url("postgresql://cm@/postgres?host=/tmp/pg", "cm_move_conv_26")
        == "postgresql://cm@/cm_move_conv_26?host=/tmp/pg"
    )
    assert database_url("postgresql://cm@localhost", "a b") == "postgresql://cm@localhost/a%20b"
