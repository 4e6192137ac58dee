"""The index's coverage: looked at again every 5 minutes while whole, every 30 s while short, and
a shortfall believed only when two looks in a row agree."""

from __future__ import annotations

from typing import Any

from cognitive_memory.index.coverage import RECHECK_SECONDS, WHOLE_RECHECK_SECONDS, IndexCoverage


class Counted:
    """An index whose count is scripted: each call takes the next number (the last one repeats)."""

    def __init__(self, *counts: int) -> None:
        self.counts = list(counts)
        self.calls = 0

    def count(self) -> int:
        self.calls += 1
        return self.counts.pop(0) if len(self.counts) > 1 else self.counts[0]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _coverage(index: Counted, expected: int, clock: Clock) -> IndexCoverage:
    vectors: Any = index
    return IndexCoverage(vectors, lambda: expected, clock=clock)


def test_a_whole_index_is_looked_at_again_every_five_minutes_and_found_short() -> None:
    index, clock = Counted(5), Clock()
    coverage = _coverage(index, 5, clock)

    assert coverage.shortfall() is None
    clock.now += WHOLE_RECHECK_SECONDS - 1
    assert coverage.shortfall() is None
    assert index.calls == 1  # a whole index costs recall nothing in between
    index.counts = [0]  # its collection made again empty by another process
    clock.now += 1
    assert coverage.shortfall() is None, "the recall that finds the look stale does not wait for the next"
    assert coverage.wait(timeout=10)
    assert coverage.shortfall() == (0, 5)


def test_a_short_index_is_looked_at_again_every_thirty_seconds_until_whole() -> None:
    index, clock = Counted(2), Clock()
    coverage = _coverage(index, 5, clock)

    assert coverage.shortfall() == (2, 5)
    calls = index.calls
    clock.now += RECHECK_SECONDS - 1
    assert coverage.shortfall() == (2, 5) and index.calls == calls  # not looked at yet
    index.counts = [5]  # rebuilt
    assert coverage.shortfall() == (2, 5)
    clock.now += 1
    assert coverage.shortfall() is None


def test_one_short_count_between_two_whole_ones_is_not_a_shortfall() -> None:
    index, clock = Counted(4, 5), Clock()  # a memory deleted between the two counts of a look

    assert _coverage(index, 5, clock).look() is None


def test_an_index_that_cannot_be_counted_is_not_called_short() -> None:
    from cognitive_memory.errors import StorageError

    class Down:
        def count(self) -> int:
            raise StorageError("the index is away")

    down: Any = Down()

    assert IndexCoverage(down, lambda: 5).look() is None
