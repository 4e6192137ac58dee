"""OwnChanges: the change-log ranges this store object's writes appended (pure bookkeeping)."""

from __future__ import annotations

from cognitive_memory.storage.own_changes import KEPT, OwnChanges


def test_a_write_s_range_is_ours_and_what_lies_between_writes_is_not() -> None:
    own = OwnChanges()
    own.add(0, 3)  # seqs 1-3
    own.add(5, 6)  # seq 6 (4 and 5: another process's)
    assert [seq for seq in range(0, 9) if own.ours(seq)] == [1, 2, 3, 6]


def test_a_write_that_appended_nothing_adds_nothing_and_touching_ranges_merge() -> None:
    own = OwnChanges()
    own.add(4, 4)
    assert not own.ours(4)
    own.add(0, 2)
    own.add(2, 5)
    assert [seq for seq in range(0, 7) if own.ours(seq)] == [1, 2, 3, 4, 5]


def test_past_its_limit_the_oldest_ranges_go_first() -> None:
    own = OwnChanges()
    for n in range(KEPT + 1):
        own.add(2 * n, 2 * n + 1)
    assert not own.ours(1)
    assert own.ours(2 * KEPT + 1)
