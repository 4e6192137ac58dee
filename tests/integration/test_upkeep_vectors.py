"""The health of the vector index: the check warns about vectors searched exactly until the repair
builds the index, and about an index without the sessions until the repair writes them."""

from __future__ import annotations

from pathlib import Path

import pytest

from cognitive_memory.encoding import HashEncoder
from cognitive_memory.index import edge_store
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem
from cognitive_memory.upkeep import check_vectors, repair_index
from cognitive_memory.upkeep.vectors import SESSIONLESS


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


def test_the_qdrant_check_warns_about_an_index_without_sessions_until_repair_writes_them(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    older_fields = {name: kind for name, kind in edge_store.INDEXED_FIELDS.items() if name != "session_id"}
    with monkeypatch.context() as before:
        before.setattr(edge_store, "INDEXED_FIELDS", older_fields)
        older = build_system(Settings(env_file=None), encoder=HashEncoder())
        older.store_many(["a note of the session", "another note of it"], session_id="mine")
        older.close()
    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        warned = check_vectors(system)
        repaired = repair_index(system)
        healthy = check_vectors(system)
    finally:
        system.close()

    assert (warned.status, warned.detail) == ("warn", f"{healthy.detail}; {SESSIONLESS}")
    assert "a session filter searches the session's latest 5,000 memories only" in warned.detail
    assert repaired.status == "ok", repaired.detail
    assert healthy.status == "ok", healthy.detail
