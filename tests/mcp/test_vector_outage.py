"""A vector index outage: stores are accepted and queued, recall falls back to words, the queue drains."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path

import anyio
import pytest
from mcp import Client

from cognitive_memory.core.memory import Vector
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.errors import StorageError
from cognitive_memory.index import ArrayVectorStore, VectorFilter, VectorHit, VectorPoint, VectorStoreInfo
from cognitive_memory.index.sparse import SparseVector
from cognitive_memory.retrieval import RetrievalConfig, Retriever
from cognitive_memory.service import SHORT_ID_CHARS
from cognitive_memory.storage import SQLiteMemoryStore
from cognitive_memory.system import CognitiveSystem
from interfaces.mcp_server import create_server

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL


class FlakyVectorStore(ArrayVectorStore):
    """An in-memory index whose every call fails while ``down`` is set (the fault boundary)."""

    down = False

    def _check(self) -> None:
        if self.down:
            raise StorageError("Qdrant at http://qdrant:6333 failed: connection refused")

    def upsert(self, points: Sequence[VectorPoint]) -> None:
        self._check()
        super().upsert(points)

    def delete(self, ids: Sequence[str]) -> None:
        self._check()
        super().delete(ids)

    def update_words(self, words: Mapping[str, SparseVector]) -> list[str]:
        self._check()
        return super().update_words(words)

    def search(
        self, vector: Vector, limit: int, where: VectorFilter | None = None, *, precise: bool = False
    ) -> list[VectorHit]:
        self._check()
        return super().search(vector, limit, where, precise=precise)

    def count(self) -> int:
        self._check()
        return super().count()

    def info(self) -> VectorStoreInfo:
        self._check()
        return super().info()


@pytest.fixture
async def outage(data_dir: Path) -> AsyncIterator[tuple[Client, CognitiveSystem, FlakyVectorStore]]:
    memories = SQLiteMemoryStore(data_dir / "memories.db")
    vectors = FlakyVectorStore()
    retriever = Retriever(memories, vectors, RetrievalConfig())
    system = CognitiveSystem(memories, vectors, HashEncoder(), retriever, retry_seconds=0.05)
    try:
        async with Client(create_server(system)) as client:
            yield client, system, vectors
    finally:
        system.close()


async def test_an_outage_queues_stores_degrades_recall_and_drains_by_itself(
    outage: tuple[Client, CognitiveSystem, FlakyVectorStore],
) -> None:
    client, system, vectors = outage
    before = await client.call_tool("store_memory", {"text": "The payroll export runs on the first Monday"})
    assert before.structured_content is not None and before.structured_content["queued"] is False

    vectors.down = True
    during = await client.call_tool(
        "store_memory", {"text": "The payroll export moved to the ledger service"}
    )
    assert not during.is_error
    body = during.structured_content
    assert body is not None
    assert body["queued"] is True and body["retry_in_seconds"] == pytest.approx(0.05)
    assert "indexed automatically" in during.content[0].text  # type: ignore[union-attr]  # TextContent
    assert system.records.memories.counts().total == 2  # acknowledged means committed to SQLite

    recalled = await client.call_tool("recall_memories", {"query": "payroll export ledger"})
    assert not recalled.is_error
    result = recalled.structured_content
    assert result is not None and result["degraded"] is True
    core_ids = [m["id"] for m in result["memories"]["core"]]
    assert core_ids[0] == body["memory_id"][:SHORT_ID_CHARS]  # found by its words
    assert "words only" in recalled.content[0].text  # type: ignore[union-attr]  # TextContent
    status = await client.call_tool("memory_status", {})
    assert status.structured_content is not None
    assert status.structured_content["system_status"] == "degraded"
    assert "cannot be reached" in status.structured_content["problem"]
    assert status.structured_content["storage_stats"]["qdrant_status"].startswith("unavailable")

    vectors.down = False
    with anyio.fail_after(10):
        while system.records.outbox.pending():
            await anyio.sleep(0.02)
    assert vectors.count() == 2
    healed = await client.call_tool("recall_memories", {"query": "payroll export ledger"})
    assert healed.structured_content is not None and "degraded" not in healed.structured_content
    status = await client.call_tool("memory_status", {})
    assert status.structured_content is not None and status.structured_content["system_status"] == "healthy"
