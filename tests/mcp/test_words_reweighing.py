"""`memory_status` while a store above ``index_replication.REWEIGH_INLINE`` memories weighs its words
again in the background: the pass's progress, recall going on meanwhile, nothing once it ends."""

from __future__ import annotations

import pytest
from mcp import Client

from cognitive_memory.replicas import index_replication as replication
from cognitive_memory.system import CognitiveSystem
from tests.mcp.tools import call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL


async def test_memory_status_shows_the_words_weighed_again_then_nothing(
    client: Client, hash_system: CognitiveSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(replication, "REWEIGH_INLINE", 1)
    for text in ("kafka lag", "kafka consumer offsets"):
        await call(client, "store_memory", {"text": text})
    await call(client, "store_memory", {"text": "a much longer note about " + "many different words " * 8})
    during = await call(client, "memory_status", {})
    recalled = await call(client, "recall_memories", {"query": "kafka", "detail": "full"})
    while hash_system.words_upgrade.step():
        pass
    after = await call(client, "memory_status", {})

    assert during["words_reweighing"] == {"done": 0, "total": 3}
    assert len(recalled["memories"]["core"] + recalled["memories"]["peripheral"]) >= 2
    assert "words_reweighing" not in after
