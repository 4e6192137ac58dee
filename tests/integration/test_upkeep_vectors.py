"""The health of the vector index: the check warns about vectors searched exactly until the repair
builds the index."""

from __future__ import annotations

import pytest

from cognitive_memory.system import CognitiveSystem
from cognitive_memory.upkeep import check_vectors, repair_index


@pytest.mark.slow
def test_the_qdrant_check_warns_about_unindexed_vectors_until_repair_builds_the_index(
    hash_system: CognitiveSystem,
) -> None:
    for start in range(0, 5_000, 1_000):
        hash_system.store_many(
            [f"bulk note {n} about the payments service" for n in range(start, start + 1_000)]
        )

    warned = check_vectors(hash_system)
    repaired = repair_index(hash_system)
    healthy = check_vectors(hash_system)

    assert warned.status == "warn"
    assert warned.detail.endswith(
        "5000 vectors searched exactly, without the HNSW index (recall slows as they grow): "
        "`memory_system doctor --repair` builds it"
    )
    assert repaired.status == "ok", repaired.detail
    assert (healthy.status, healthy.detail) == ("ok", warned.detail.split(";")[0])
