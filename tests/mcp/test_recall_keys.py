"""Keys found by recall, through the SDK's in-memory client: a memory's key's words are among its
words (``database-choice``: database, choice), a query that is a whole key ranks its memory first
whatever its words, and both follow the key as update_memory changes or clears it, and a restart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import TextContent

from cognitive_memory.encoding import HashEncoder
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from interfaces.mcp_server import create_server
from tests.mcp.tools import call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL

DECISION = "We picked PostgreSQL over MySQL for the ledger."
# Memories that say the key's words in their own text, many times: they lead any word search.
TALK = [
    f"Database choice notes {n}: the database choice for service {n} is still a choice to make."
    for n in range(6)
]


async def store(client: Client, text: str, **context: Any) -> str:
    body = await call(
        client, "store_memory", {"text": text, "context": context} if context else {"text": text}
    )
    return str(body["memory_id"])


async def recalled(client: Client, query: str, **arguments: Any) -> list[dict[str, Any]]:
    body = await call(client, "recall_memories", {"query": query, "detail": "full", **arguments})
    return [*body["memories"]["core"], *body["memories"]["peripheral"]]


async def test_a_key_typed_as_the_query_ranks_its_memory_first_over_memories_full_of_its_words(
    client: Client,
) -> None:
    for text in TALK:
        await store(client, text)
    keyed = await store(client, DECISION, key="database-choice")

    for query in ("database-choice", "Database-Choice", "  DATABASE-CHOICE "):
        found = await recalled(client, query)
        assert found[0]["id"] == keyed, query
        assert found[0]["score"]["key"] > 0 and found[0]["rank"] == 1
    worded = await recalled(client, "database choice")  # its words, not its key: no lift
    assert keyed in [m["id"] for m in worded]
    assert all("key" not in m["score"] for m in worded)


async def test_a_key_of_words_recall_ignores_still_names_its_memory(client: Client) -> None:
    await store(client, "The office plants need water on Mondays.")
    keyed = await store(client, "Cognitive Memory keeps what an assistant learns.", key="about")

    found = await recalled(client, "About")

    assert [m["id"] for m in found][:1] == [keyed]  # 'about' is a stopword: no word, yet it passes
    assert found[0]["score"]["words"] == 0.0 and found[0]["score"]["key"] > 0


async def test_one_of_a_keys_words_finds_its_memory_in_recall_and_lists(client: Client) -> None:
    await store(client, "The office plants need water on Mondays.")
    keyed = await store(client, DECISION, key="database-choice")

    found = await recalled(client, "choice")
    listed = await call(client, "list_memories", {"text": "choice"})

    assert [m["id"] for m in found] == [keyed]
    assert found[0]["score"]["words"] == 1.0 and "key" not in found[0]["score"]
    assert [m["id"] for m in listed["memories"]] == [keyed]


async def test_the_key_names_its_memory_only_in_the_recalls_projects(client: Client) -> None:
    keyed = await store(client, DECISION, key="database-choice", project="ledger")

    here = await recalled(client, "database-choice", include_bridges=False)
    there = await recalled(client, "database-choice", filters={"projects": ["ledger"]})

    assert keyed not in [m["id"] for m in here]
    assert there[0]["id"] == keyed and there[0]["score"]["key"] > 0


async def test_explain_and_the_text_say_the_query_is_the_memorys_key(client: Client) -> None:
    for text in TALK:
        await store(client, text)
    keyed = await store(client, DECISION, key="database-choice")

    body = await call(client, "recall_memories", {"query": "database-choice", "explain": [keyed]})
    full = await client.call_tool("recall_memories", {"query": "database-choice", "detail": "full"})
    brief = await client.call_tool("recall_memories", {"query": "database-choice"})

    [item] = body["explained"]
    assert (item["reason"], item["rank"]) == ("returned", 1)
    assert "the query is its key" in item["why"] and item["score"]["key"] > 0
    (block,) = full.content
    assert isinstance(block, TextContent) and "key +" in block.text
    (line,) = brief.content
    assert isinstance(line, TextContent) and " · key, " in line.text.splitlines()[2]


async def test_changing_or_clearing_the_key_moves_its_words_and_its_name(client: Client) -> None:
    for text in TALK:
        await store(client, text)
    keyed = await store(client, DECISION, key="database-choice")

    await call(client, "update_memory", {"memory_id": keyed, "key": "ledger-store"})
    by_old = await recalled(client, "database-choice")
    by_new = await recalled(client, "ledger-store")
    by_word = await recalled(client, "store")
    await call(client, "update_memory", {"memory_id": keyed, "key": ""})
    cleared = await recalled(client, "ledger-store")

    assert keyed not in [m["id"] for m in by_old]
    assert by_new[0]["id"] == keyed and by_new[0]["score"]["key"] > 0
    assert [m["id"] for m in by_word] == [keyed]
    assert keyed not in [m["id"] for m in cleared]


async def test_a_key_given_by_storing_the_same_text_again_is_found(client: Client) -> None:
    plain = await store(client, DECISION)
    again = await store(client, DECISION, key="database-choice")

    found = await recalled(client, "choice")

    assert again == plain and [m["id"] for m in found] == [plain]


async def test_a_key_is_found_after_a_restart_on_the_same_data(data_dir: Path) -> None:
    first = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        async with Client(create_server(first, session_id="first", max_results=50)) as client:
            for text in TALK:
                await store(client, text)
            keyed = await store(client, DECISION, key="database-choice")
    finally:
        first.close()

    again = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        async with Client(create_server(again, session_id="second", max_results=50)) as client:
            by_key = await recalled(client, "database-choice")
            by_word = await recalled(client, "choice")
    finally:
        again.close()

    assert by_key[0]["id"] == keyed and by_key[0]["score"]["key"] > 0
    assert keyed in [m["id"] for m in by_word]
