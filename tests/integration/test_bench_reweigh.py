"""bench/reweigh.py: the store call that drifts the average length, and the pass that follows,
as each rule for the store's size has it."""

from __future__ import annotations

from bench import reweigh
from cognitive_memory.replicas import index_replication as replication


def test_above_the_inline_limit_the_drift_leaves_a_pass_to_the_background() -> None:
    result = reweigh.run(300, inline=100)

    assert result["memories_when_drifted"] > 300
    assert result["background_pass"] is not None


def test_within_the_inline_limit_the_store_call_weighs_every_memory_again() -> None:
    result = reweigh.run(300, inline=10_000)

    assert result["background_pass"] is None
    assert replication.REWEIGH_INLINE == 2_000  # the limit is the store's again
