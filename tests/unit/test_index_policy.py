"""When bulk paths build the approximate vector index."""

from __future__ import annotations

from cognitive_memory.replicas.index_replication import unindexed_threshold


def test_small_stores_wait_for_five_thousand_unindexed_vectors() -> None:
    assert unindexed_threshold(0) == 5_000
    assert unindexed_threshold(20_000) == 5_000


def test_large_stores_wait_for_a_fifth_of_their_vectors_so_rebuilds_stay_rare() -> None:
    assert unindexed_threshold(25_001) == 5_000
    assert unindexed_threshold(100_000) == 20_000
    assert unindexed_threshold(1_000_000) == 200_000
