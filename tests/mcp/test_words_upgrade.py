"""`memory_status` over an older store (its points without words): the words' progress while they
are built into the index, nothing once they are all in; every memory recalled meanwhile."""

from __future__ import annotations

from dataclasses import replace

import pytest
from mcp import Client

from cognitive_memory.replicas.index_words import WordsUpgrade
from cognitive_memory.system import CognitiveSystem
from interfaces.mcp_server import MemoryServer, create_server
from tests.aging import WORDS, make_old_store
from tests.mcp.tools import call

# An older store is a SQLite file from before the words were in the index; a PostgreSQL store has
# them there from its first migration.
pytestmark = [pytest.mark.anyio, pytest.mark.stores("sqlite", reason="an older store is a SQLite file")]


@pytest.fixture
def old_ids() -> list[str]:
    return make_old_store()


@pytest.fixture
def server(old_ids: list[str], hash_system: CognitiveSystem) -> MemoryServer:
    """The server over the older store, recall set to search the words in the index."""
    hash_system.retriever.config = replace(hash_system.retriever.config, words_in_index=True)
    return create_server(hash_system, session_id="session-under-test", max_results=50)


async def _recalled(client: Client, word: str) -> list[str]:
    answer = await call(client, "recall_memories", {"query": word, "max_results": 3, "detail": "full"})
    return [memory["id"] for group in ("core", "peripheral") for memory in answer["memories"][group]]


async def test_memory_status_shows_the_words_being_built_then_nothing(
    client: Client, hash_system: CognitiveSystem, old_ids: list[str]
) -> None:
    upgrade = WordsUpgrade(hash_system.records, hash_system.vectors, batch_size=4)
    before = (await call(client, "memory_status", {}))["words_index"]
    upgrade.step()
    during = (await call(client, "memory_status", {}))["words_index"]
    found_during = [old_ids[i] in await _recalled(client, word) for i, word in enumerate(WORDS)]
    while upgrade.step():
        pass
    after = await call(client, "memory_status", {})
    found_after = [old_ids[i] in await _recalled(client, word) for i, word in enumerate(WORDS)]

    assert before == {"done": 0, "total": len(WORDS)}
    assert during == {"done": 4, "total": len(WORDS)}
    assert "words_index" not in after
    assert all(found_during) and all(found_after)
