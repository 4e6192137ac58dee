"""An index that lost memories (its files lost, an older copy put back): recall still finds what it
lacks, by its words in SQLite, and says the answer may be incomplete until the index is whole."""

from __future__ import annotations

import pytest
from mcp import Client

from cognitive_memory.system import CognitiveSystem
from tests.mcp.tools import call

# A lost memory found by its words is FTS5's: with PostgreSQL the words are the index's, and a
# lost index is rebuilt from the change log before the recall (docs/team.md).
pytestmark = [pytest.mark.anyio, pytest.mark.stores("sqlite", reason="FTS5's words find what the index lost")]

NOTES = [
    "The staging database password rotates every ninety days.",
    "Grafana dashboards live in the observability repository.",
    "The payroll export runs on the first Monday of each month.",
    "Kubernetes node pools autoscale between three and nine nodes.",
    "The office wifi guest network is called lighthouse.",
]


async def test_a_memory_the_index_lost_is_found_by_its_words_and_the_answer_says_so(
    client: Client, hash_system: CognitiveSystem
) -> None:
    ids = [(await call(client, "store_memory", {"text": text}))["memory_id"] for text in NOTES]
    hash_system.flush()
    hash_system.vectors.delete(ids[:3])  # as if an older copy of the index were put back
    # ... before a process opened it, whose opener then looks (this server's own opener may have
    # looked already, between the stores and the loss: a whole index is not looked at again)
    assert hash_system.retriever.coverage is not None
    hash_system.retriever.coverage.look()

    recalled = await client.call_tool("recall_memories", {"query": "payroll export Monday", "detail": "full"})

    answer = recalled.structured_content
    assert answer is not None and answer["degraded"] is True
    assert answer["warning"].startswith("The vector index holds 2 of 5 memories")
    assert answer["memories"]["core"][0]["id"] == ids[2]
    text = recalled.content[0]
    assert getattr(text, "text", "").splitlines()[1].startswith("⚠️ The vector index holds 2 of 5 memories")

    hash_system.rebuild_index()  # what `doctor --repair` runs

    whole = await call(client, "recall_memories", {"query": "payroll export Monday", "detail": "full"})
    assert "degraded" not in whole and "warning" not in whole
    assert whole["memories"]["core"][0]["id"] == ids[2]
