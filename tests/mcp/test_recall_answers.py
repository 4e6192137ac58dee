"""recall_memories' answers: max_results caps every memory, brief and full detail, the text block."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from cognitive_memory.service import BRIEF_CONTENT_CHARS, SHORT_ID_CHARS
from cognitive_memory.system import CognitiveSystem
from interfaces.mcp_server import create_server
from tests.mcp.tools import call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL

BACKUP = "The nightly backup job failed because the S3 bucket credentials had expired."
BRIEF_FIELDS = {"id", "content", "score", "date"}


@pytest.fixture
async def hash_client(hash_system: CognitiveSystem) -> AsyncIterator[Client]:
    """A client of a server over the deterministic hash encoder (the cap is plumbing, not quality)."""
    async with Client(create_server(hash_system, session_id="hash-session")) as connected:
        yield connected


def every(body: dict[str, Any]) -> list[dict[str, Any]]:
    lists = body["memories"]
    return [*lists["core"], *lists["peripheral"], *lists["bridge"]]


def nulls(value: Any) -> list[Any]:
    """Every None anywhere in a JSON value."""
    if isinstance(value, dict):
        return [n for item in value.values() for n in nulls(item)]
    if isinstance(value, list):
        return [n for item in value for n in nulls(item)]
    return [value] if value is None else []


async def test_bridges_take_only_what_the_ranked_memories_leave_of_max_results(
    hash_client: Client, hash_system: CognitiveSystem
) -> None:
    # Stored in separate sessions so no neighbour-in-time link lets the bridge in as peripheral.
    core, bridge, _ = (
        hash_system.store(text, session_id=f"session-{n}").memory.id
        for n, text in enumerate(("alpha beta gamma delta", "gamma delta epsilon zeta", "omicron sigma"))
    )

    roomy = await call(hash_client, "recall_memories", {"query": "alpha beta", "max_results": 2})
    full = await call(hash_client, "recall_memories", {"query": "alpha beta", "max_results": 1})

    short_core, short_bridge = core[:SHORT_ID_CHARS], bridge[:SHORT_ID_CHARS]
    assert [m["id"] for m in roomy["memories"]["core"]] == [short_core]
    assert [m["id"] for m in roomy["memories"]["bridge"]] == [short_bridge]
    assert roomy["memories"]["bridge"][0]["connected_to"] == short_core
    assert roomy["total_results"] == 2
    assert [m["id"] for m in every(full)] == [short_core]
    assert full["total_results"] == 1
    whole = await call(
        hash_client, "recall_memories", {"query": "alpha beta", "max_results": 2, "detail": "full"}
    )
    (record,) = whole["memories"]["bridge"]
    assert record["id"] == bridge and record["connected_to"] == core and record["bridge_score"] >= 0.5
    assert 0.0 <= record["novelty_score"] <= 1.0 and 0.0 <= record["connection_potential"] <= 1.0
    assert record["explanation"].startswith("Close to the core memory")


async def test_max_results_five_never_returns_more_than_five_memories(client: Client) -> None:
    for text in (
        "Run pytest with xdist to spread the test suite across every CPU core.",
        "Mark slow tests so the quick test suite runs on every commit.",
        "Cache the virtualenv in CI so the test pipeline starts two minutes sooner.",
        "pytest-xdist workers each open their own test database connection.",
        "Split the test suite into shards so CI runs them in parallel.",
        "Profile the slowest tests with pytest --durations to find what to speed up.",
        "Reuse the test database between runs instead of migrating it every time.",
        "Fixtures scoped to the session make the test suite run faster.",
    ):
        await call(client, "store_memory", {"text": text})

    for detail in ("brief", "full"):
        body = await call(
            client,
            "recall_memories",
            {"query": "how do I make the pytest test suite run faster?", "max_results": 5, "detail": detail},
        )
        assert 0 < len(every(body)) <= 5
        assert body["total_results"] == len(every(body))


async def test_a_brief_answer_gives_each_memory_s_fields_and_no_nulls(client: Client) -> None:
    stored = await call(
        client,
        "store_memory",
        {"text": BACKUP, "context": {"tags": ["ops"], "source_info": "incident review"}},
    )
    result = await client.call_tool("recall_memories", {"query": "why did the nightly backup job fail?"})

    assert not result.is_error
    body = result.structured_content
    assert body is not None and nulls(body) == []
    assert body["detail"] == "brief" and "message" not in body
    first = body["memories"]["core"][0]
    # The project recalled from is not repeated; level, type and why it was found are in full.
    assert set(first) == BRIEF_FIELDS | {"tags", "source"}
    short = stored["memory_id"][:SHORT_ID_CHARS]
    assert (first["id"], first["content"], first["tags"]) == (short, BACKUP, ["ops"])
    assert first["source"] == "💭 incident review"
    assert first["date"] == stored["stored_at"][:10]
    assert first["score"] == round(first["score"], 3) > 0
    text = result.content[0].text  # type: ignore[union-attr]  # first block is TextContent
    header = f"1. [core] {short} · score {first['score']:.2f} · meaning, words ("
    assert header in text
    assert f"\n   {BACKUP}" in text and "tags: ops" in text and "project" not in text


async def test_a_long_memory_is_cut_in_brief_and_the_text_block_holds_the_same_text(client: Client) -> None:
    long_text = " ".join(
        f"Step {n}: the nightly backup job copies the billing database to the S3 bucket." for n in range(40)
    )
    stored = await call(client, "store_memory", {"text": long_text})
    query = {"query": "what does the nightly backup job copy to the S3 bucket?"}

    brief = await client.call_tool("recall_memories", query)
    full = await call(client, "recall_memories", {**query, "detail": "full"})

    assert brief.structured_content is not None
    (cut,) = every(brief.structured_content)
    assert cut["id"] == stored["memory_id"][:SHORT_ID_CHARS] and cut["truncated"] is True
    assert len(cut["content"]) <= BRIEF_CONTENT_CHARS
    assert long_text.startswith(cut["content"]) and long_text[len(cut["content"])] == " "
    assert "get_memories" in brief.structured_content["message"]
    text = brief.content[0].text  # type: ignore[union-attr]  # first block is TextContent
    assert f"\n   {cut['content']}\n" in text and "get_memories returns the rest" in text
    (whole,) = every(full)
    assert whole["content"] == long_text and "truncated" not in whole


async def test_a_full_answer_gives_whole_records_with_every_score(client: Client) -> None:
    stored = await call(
        client, "store_memory", {"text": BACKUP, "context": {"source_info": "incident review"}}
    )
    result = await client.call_tool(
        "recall_memories", {"query": "why did the nightly backup job fail?", "detail": "full"}
    )

    body = result.structured_content
    assert body is not None and nulls(body) == []
    first = body["memories"]["core"][0]
    assert first["id"] == stored["memory_id"] and first["rank"] == 1
    assert {"words", "evidence", "linked", "similarity", "total"} <= set(first["score"])
    assert first["score"]["evidence"] == pytest.approx(
        first["score"]["similarity"] + 0.5 * first["score"]["words"]
    )
    assert first["source_info"] == "💭 incident review" and first["access_count"] == 0
    assert "modified_date" not in first  # null, so left out
    text = result.content[0].text  # type: ignore[union-attr]  # first block is TextContent
    assert "CORE MEMORIES (1):" in text and f"\n   {BACKUP}" in text and "evidence" in text


async def test_when_nothing_is_relevant_the_answer_says_so(client: Client) -> None:
    await call(client, "store_memory", {"text": BACKUP})

    result = await client.call_tool("recall_memories", {"query": "chocolate cake recipe with strawberries"})

    body = result.structured_content
    assert body is not None and body["total_results"] == 0
    assert body["message"].startswith("No memory is relevant enough to 'chocolate cake recipe")
    assert result.content[0].text == f"📋 {body['message']}"  # type: ignore[union-attr]  # a text block


@pytest.mark.model
async def test_a_misspelt_query_finds_the_memory_its_correction_names(client: Client) -> None:
    stored = await call(
        client, "store_memory", {"text": "We moved the orders database from MySQL to PostgreSQL last spring."}
    )
    await call(client, "store_memory", {"text": BACKUP})

    body = await call(client, "recall_memories", {"query": "PostgrSQL", "detail": "full"})

    assert body["memories"]["core"][0]["id"] == stored["memory_id"]
