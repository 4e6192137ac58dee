"""Short memory ids through the SDK's in-memory client: a brief recall shows them, every tool that
takes ids accepts them, and a prefix two memories share is refused naming both."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from mcp import Client
from mcp.types import TextContent

from cognitive_memory.core import records
from cognitive_memory.service import SHORT_ID_CHARS
from cognitive_memory.system import CognitiveSystem
from tests.mcp.tools import call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL

# Two ids that share their first eleven characters (and so their first SHORT_ID_CHARS).
TWINS = ("5eed5eed-a1b2-4c3d-8e4f-000000000001", "5eed5eed-a1ff-4c3d-8e4f-000000000002")


@pytest.fixture
def twin_ids(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """New memories take the TWINS ids, then random ones."""
    given = iter([uuid.UUID(i) for i in TWINS])
    monkeypatch.setattr(records, "uuid", SimpleNamespace(uuid4=lambda: next(given, None) or uuid.uuid4()))
    yield


def refusal(text: str) -> dict[str, str]:
    body: dict[str, str] = json.loads(text)
    return body


async def test_every_tool_that_takes_ids_accepts_the_short_ids_recall_shows(client: Client) -> None:
    first = (await call(client, "store_memory", {"text": "The deploy runs on Fridays at noon."}))["memory_id"]
    second = (await call(client, "store_memory", {"text": "Deploys are frozen in December."}))["memory_id"]
    recalled = await call(client, "recall_memories", {"query": "when does the deploy run?"})
    shown = {m["id"] for found in recalled["memories"].values() for m in found}
    short, other = first[:SHORT_ID_CHARS], second[:SHORT_ID_CHARS]
    assert short in shown

    read = await call(client, "get_memories", {"memory_ids": [short, other.upper()]})
    updated = await call(client, "update_memory", {"memory_id": short, "tags": ["deploy"]})
    linked = await call(client, "link_memories", {"from_id": short, "to_id": other, "relation": "relates_to"})
    related = await call(client, "related_memories", {"memory_id": other})
    unlinked = await call(client, "unlink_memories", {"from_id": short, "to_id": other})
    forgotten = await call(client, "forget_memories", {"memory_ids": [other]})

    assert [m["id"] for m in read["memories"]] == [first, second] and read["missing"] == []
    assert (updated["memory_id"], updated["changed"]) == (first, ["tags"])
    assert (linked["from_id"], linked["to_id"], linked["created"]) == (first, second, True)
    assert [m["id"] for m in related["related"]] == [first]
    assert unlinked["removed"] == ["relates_to"]
    assert forgotten["forgotten"] == [second]


async def test_a_prefix_two_memories_share_is_refused_naming_both(
    client: Client, hash_system: CognitiveSystem, twin_ids: None
) -> None:
    for text in ("Backups run at two.", "Backups are kept for thirty days."):
        await call(client, "store_memory", {"text": text})

    result = await client.call_tool("get_memories", {"memory_ids": [TWINS[0][:SHORT_ID_CHARS]]})
    forget = await client.call_tool("forget_memories", {"memory_ids": [TWINS[1][:9]]})

    assert result.is_error and forget.is_error
    (block,) = result.content
    assert isinstance(block, TextContent)
    body = refusal(block.text)
    assert body["error"] == "ambiguous_id"
    assert TWINS[0] in body["message"] and TWINS[1] in body["message"] and "more of the id" in body["message"]
    assert ", ..." not in body["message"]  # exactly two share it: it said "a, b, ..."
    assert hash_system.records.memories.counts().total == 2  # nothing forgotten


async def test_recall_shows_twins_by_as_many_characters_as_tell_them_apart(
    client: Client, twin_ids: None
) -> None:
    for text in ("Backups run at two.", "Backups are kept for thirty days."):
        await call(client, "store_memory", {"text": text})

    recalled = await call(client, "recall_memories", {"query": "backups", "types": ["core", "peripheral"]})
    shown = sorted(m["id"] for found in recalled["memories"].values() for m in found)

    assert shown == [TWINS[0][:12], TWINS[1][:12]]
    read = await call(client, "get_memories", {"memory_ids": shown})
    assert [m["id"] for m in read["memories"]] == list(TWINS)


async def test_a_short_id_no_memory_has_is_missing_like_any_unknown_id(client: Client) -> None:
    await call(client, "store_memory", {"text": "The deploy runs on Fridays at noon."})

    read = await call(client, "get_memories", {"memory_ids": ["0000ffff"]})
    changed = await client.call_tool("update_memory", {"memory_id": "0000ffff", "tags": ["x"]})

    assert read["missing"] == ["0000ffff"] and read["memories"] == []
    assert changed.is_error
    (block,) = changed.content
    assert isinstance(block, TextContent) and refusal(block.text)["error"] == "not_found"
