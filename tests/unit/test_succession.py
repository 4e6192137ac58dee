"""successors_first: a superseded memory never ranks above the memory that supersedes it."""

from __future__ import annotations

from cognitive_memory.retrieval.succession import successors_first


def test_a_superseded_memory_moves_right_after_its_successor() -> None:
    assert successors_first(["old", "x", "new", "y"], {"old": ["new"]}) == ["x", "new", "old", "y"]


def test_an_order_that_already_puts_the_successor_first_is_kept() -> None:
    order = ["new", "x", "old"]
    assert successors_first(order, {"old": ["new"]}) == order


def test_a_successor_outside_the_list_changes_nothing() -> None:
    order = ["old", "x"]
    assert successors_first(order, {"old": ["elsewhere"]}) == order


def test_a_chain_comes_out_newest_first() -> None:
    order = ["v1", "v2", "v3"]
    assert successors_first(order, {"v1": ["v2"], "v2": ["v3"]}) == ["v3", "v2", "v1"]


def test_a_memory_with_two_successors_follows_the_later_one() -> None:
    order = ["old", "a", "x", "b"]
    assert successors_first(order, {"old": ["a", "b"]}) == ["a", "x", "b", "old"]


def test_memories_released_together_keep_their_order() -> None:
    order = ["old1", "old2", "new", "x"]
    assert successors_first(order, {"old2": ["new"], "old1": ["new"]}) == ["new", "old1", "old2", "x"]


def test_a_cycle_keeps_every_memory_in_its_order_at_the_end() -> None:
    order = ["a", "x", "b"]
    assert successors_first(order, {"a": ["b"], "b": ["a"]}) == ["x", "a", "b"]


def test_no_memories_and_no_links() -> None:
    assert successors_first([], {}) == []
    assert successors_first(["a", "b"], {}) == ["a", "b"]
