"""recall_memories' filters through the SDK's in-memory client: tags, levels, types and sources."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from tests.mcp.tools import call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL


async def recalled(client: Client, filters: dict[str, Any]) -> list[str]:
    body = await call(
        client, "recall_memories", {"query": "deploying the payments service", "filters": filters}
    )
    lists = body["memories"]
    return [memory["content"] for memory in lists["core"] + lists["peripheral"] + lists["bridge"]]


async def test_filters_keep_only_the_matching_memories(client: Client) -> None:
    await call(
        client,
        "store_memory",
        {"text": "Deploy the payments service with the blue-green script.", "context": {"tags": ["ops"]}},
    )
    await call(
        client,
        "store_memory",
        {
            "text": "I deployed the payments service yesterday and it went fine.",
            "context": {"tags": ["diary"]},
        },
    )
    await call(
        client,
        "session_lessons",
        {
            "lesson_content": "Never deploy the payments service without a rollback plan.",
            "lesson_type": "warning",
        },
    )

    everything = await recalled(client, {})
    by_tag = await recalled(client, {"tags": ["ops"]})
    episodes = await recalled(client, {"hierarchy_levels": [2], "memory_types": ["episodic"]})
    lessons = await recalled(client, {"sources": ["session_lesson"]})
    nothing = await recalled(client, {"tags": ["ops"], "sources": ["session_lesson"]})

    assert len(everything) == 3
    assert by_tag == ["Deploy the payments service with the blue-green script."]
    assert episodes == ["I deployed the payments service yesterday and it went fine."]
    assert lessons == ["Never deploy the payments service without a rollback plan."]
    assert nothing == []


async def test_an_unknown_filter_or_value_is_refused(client: Client) -> None:
    for filters in ({"colour": ["red"]}, {"hierarchy_levels": [3]}, {"sources": ["email"]}):
        result = await client.call_tool("recall_memories", {"query": "anything", "filters": filters})
        assert result.is_error, filters


async def test_a_tag_the_query_names_counts_as_the_memorys_words(client: Client) -> None:
    """A memory tagged concurrency whose text never says it holds the word at the relevance floor
    (issue 45: recall found nothing that list_memories found by the tag)."""
    body = await call(
        client,
        "store_memory",
        {"text": "A mutex around the counter fixed the lost updates.", "context": {"tags": ["Concurrency"]}},
    )
    memory_id = body["memory_id"]
    await call(
        client,
        "store_memory",
        {"text": "The grid collapsed on narrow screens.", "context": {"tags": ["css"]}},
    )
    query = "concurrency counter"

    by_tag = await call(client, "recall_memories", {"query": query, "filters": {"tags": ["Concurrency"]}})
    plain = await call(client, "recall_memories", {"query": query, "detail": "full"})
    other = await call(
        client, "recall_memories", {"query": "weather tomorrow", "filters": {"tags": ["Concurrency"]}}
    )

    assert [m["id"] for m in by_tag["memories"]["core"]] == [memory_id[:8]]
    [found] = plain["memories"]["core"]
    assert found["id"] == memory_id and found["score"]["words"] == 1.0
    assert other["total_results"] == 0
