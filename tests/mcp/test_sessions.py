"""Sessions through the SDK's in-memory client: what a session stores carries its id, list and
recall filter by it ('current': the caller's), and memory_status names it."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from tests.mcp.tools import call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL


async def listed(client: Client, **filters: Any) -> list[str]:
    page = await call(client, "list_memories", {"filters": filters})
    return [memory["content"] for memory in page["memories"]]


async def test_list_and_recall_keep_to_the_session_asked_for(client: Client) -> None:
    await call(client, "store_memory", {"text": "Ours: the build cache lives in /var/cache/build."})
    await call(
        client,
        "store_memory",
        {"text": "Theirs: the build cache lives in /tmp/build.", "context": {"session": "nightly-2024"}},
    )

    assert await listed(client, session="current") == ["Ours: the build cache lives in /var/cache/build."]
    assert await listed(client, session="nightly-2024") == ["Theirs: the build cache lives in /tmp/build."]
    assert await listed(client, session="no-such-session") == []
    recalled = await call(
        client,
        "recall_memories",
        {"query": "where does the build cache live", "filters": {"session": "nightly-2024"}},
    )
    found = [m["content"] for lists in recalled["memories"].values() for m in lists]
    assert found == ["Theirs: the build cache lives in /tmp/build."]
    narrowed = await call(
        client,
        "recall_memories",
        {"query": "where does the build cache live", "filters": {"session": "nightly-2024", "tags": ["ops"]}},
    )
    assert narrowed["total_results"] == 0  # the session's memories still meet the other filters


async def test_memory_status_and_get_memories_name_the_session(client: Client) -> None:
    status = await call(client, "memory_status", {})
    stored = await call(client, "store_memory", {"text": "Sessions are named by the server."})

    (record,) = (await call(client, "get_memories", {"memory_ids": [stored["memory_id"]]}))["memories"]

    assert status["session"] == record["session"] == "session-under-test"
    refused = await client.call_tool("store_memory", {"text": "x", "context": {"session": "current"}})
    assert refused.is_error
