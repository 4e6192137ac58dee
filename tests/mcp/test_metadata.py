"""The caller's own fields (context.metadata, core/metadata.py) through the SDK's in-memory client:
stored, returned, replaced by update_memory (the old ones kept in the version), and matched by
filters.metadata in list_memories and recall_memories."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client

from tests.mcp.tools import call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL

FIELDS = {"phase": "beta", "ticket": 42, "reviewed": True, "owners": ["ana", "bo"], "extra": {"a": {"b": 1}}}


async def refusal(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    body: dict[str, Any] = json.loads(result.content[0].text)  # type: ignore[union-attr]  # a TextContent
    return body


async def listed(client: Client, metadata: dict[str, Any], **arguments: Any) -> list[str]:
    body = await call(client, "list_memories", {"filters": {"metadata": metadata}, **arguments})
    return [memory["content"] for memory in body["memories"]]


async def test_stored_fields_come_back_beside_the_systems_keys(client: Client) -> None:
    context = {"metadata": FIELDS, "source_info": "standup"}
    stored = await call(client, "store_memory", {"text": "The beta ships on Monday.", "context": context})

    (memory,) = (await call(client, "get_memories", {"memory_ids": [stored["memory_id"]]}))["memories"]
    (page,) = (await call(client, "list_memories", {}))["memories"]
    recall = await call(client, "recall_memories", {"query": "when does the beta ship", "detail": "full"})

    assert memory["metadata"] == {**FIELDS, "source_info": "standup"}
    assert page["metadata"] == memory["metadata"]
    assert recall["memories"]["core"][0]["metadata"] == memory["metadata"]


async def test_update_replaces_the_fields_and_keeps_the_old_ones_in_the_version(client: Client) -> None:
    context = {"metadata": {"phase": "beta", "ticket": 1}, "source_info": "standup"}
    stored = await call(client, "store_memory", {"text": "The beta ships on Monday.", "context": context})
    memory_id = stored["memory_id"]

    updated = await call(client, "update_memory", {"memory_id": memory_id, "metadata": {"phase": "ga"}})
    cleared = await call(client, "update_memory", {"memory_id": memory_id, "metadata": {}})
    (memory,) = (await call(client, "get_memories", {"memory_ids": [memory_id], "include_history": True}))[
        "memories"
    ]

    assert updated["changed"] == ["metadata"] and updated["version"] == 1
    assert updated["memory"]["metadata"] == {"source_info": "standup", "phase": "ga"}
    assert cleared["changed"] == ["metadata"]
    assert memory["metadata"] == {"source_info": "standup"}
    assert [v["metadata"] for v in memory["history"]] == [
        {"source_info": "standup", "phase": "beta", "ticket": 1},
        {"source_info": "standup", "phase": "ga"},
    ]
    assert await listed(client, {"phase": "ga"}) == []


async def test_a_store_under_a_held_key_replaces_the_fields(client: Client) -> None:
    first = {"key": "release", "metadata": {"phase": "beta", "ticket": 1}}
    await call(client, "store_memory", {"text": "The beta ships on Monday.", "context": first})
    again = {"key": "release", "metadata": {"phase": "ga"}}
    stored = await call(client, "store_memory", {"text": "GA ships on Friday.", "context": again})

    (memory,) = (await call(client, "get_memories", {"memory_ids": [stored["memory_id"]]}))["memories"]

    assert stored["updated"] is True
    assert memory["metadata"] == {"phase": "ga"}


async def test_list_matches_every_pair_exactly(client: Client) -> None:
    stores = [
        ("Alpha note.", {"phase": "beta", "ticket": 42, "reviewed": True}),
        ("Beta note.", {"phase": "beta", "ticket": 7}),
        ("Gamma note.", {"phase": "ga", "ticket": "42"}),
        ("Delta note.", {}),
        ("Epsilon note.", {"ticket": 10**30}),
    ]
    for text, fields in stores:
        await call(client, "store_memory", {"text": text, "context": {"metadata": fields}})

    assert sorted(await listed(client, {"phase": "beta"})) == ["Alpha note.", "Beta note."]
    assert await listed(client, {"phase": "beta", "ticket": 42}) == ["Alpha note."]
    assert await listed(client, {"ticket": 42.0}) == ["Alpha note."]  # a number equals its float
    assert await listed(client, {"ticket": "42"}) == ["Gamma note."]  # a string is not a number
    assert await listed(client, {"reviewed": True}) == ["Alpha note."]
    assert await listed(client, {"reviewed": 1}) == []  # a boolean is not a number
    assert await listed(client, {"phase": "Beta"}) == []  # exact: case counts
    assert await listed(client, {"phase": "beta", "missing": "x"}) == []
    assert await listed(client, {"ticket": 10**30}) == ["Epsilon note."]  # past 64 bits
    body = await call(client, "list_memories", {"filters": {"metadata": {"phase": "beta"}}, "overview": True})
    assert body["total"] == 2


async def test_recall_finds_a_matching_memory_that_many_closer_ones_would_hide(client: Client) -> None:
    for number in range(120):
        text = f"Deploying the payments service, run {number}."
        await call(client, "store_memory", {"text": text, "context": {"metadata": {"team": "ops"}}})
    audit = "Deploying the payments service needs the audit team sign-off."
    await call(client, "store_memory", {"text": audit, "context": {"metadata": {"team": "audit"}}})
    query = {"query": "deploying the payments service run", "max_results": 50}

    unfiltered = await call(client, "recall_memories", query)
    filtered = await call(client, "recall_memories", {**query, "filters": {"metadata": {"team": "audit"}}})
    ops = await call(client, "recall_memories", {**query, "filters": {"metadata": {"team": "ops"}}})

    def texts(body: dict[str, Any]) -> list[str]:
        found = body["memories"]
        return [m["content"] for m in found["core"] + found["peripheral"] + found["bridge"]]

    assert len(texts(unfiltered)) == 50 and audit not in texts(unfiltered)  # ranked below 50 others
    assert texts(filtered) == [audit]
    assert len(texts(ops)) == 50 and audit not in texts(ops)


@pytest.mark.parametrize(
    ("metadata", "code", "says"),
    [
        ({"a": {"b": {"c": {"d": {"e": 1}}}}}, "invalid_metadata", "nested 5 deep; at most 4"),
        ({"blob": "x" * 5000}, "metadata_too_large", "at most 4,096"),
        ({f"k{n}": n for n in range(33)}, "invalid_metadata", "33 keys; at most 32"),
        ({"k" * 65: 1}, "invalid_metadata", "1-64 characters"),
        ({"source_info": "me"}, "invalid_metadata", "'source_info' is reserved"),
        ({"lesson_type": "warning"}, "invalid_metadata", "'lesson_type' is reserved"),
        (["not", "an", "object"], "invalid_type", "dictionary"),
    ],
)
async def test_bad_fields_are_refused_and_nothing_is_stored(
    client: Client, metadata: Any, code: str, says: str
) -> None:
    body = await refusal(
        client, "store_memory", {"text": "Nothing to see.", "context": {"metadata": metadata}}
    )

    assert body["error"] == code
    assert "context.metadata" in body["message"] and says in body["message"], body["message"]
    assert ".." not in body["message"]  # a problem's own full stop is not doubled
    assert (await call(client, "list_memories", {}))["total"] == 0


async def test_a_bad_update_changes_nothing(client: Client) -> None:
    stored = await call(client, "store_memory", {"text": "Kept.", "context": {"metadata": {"phase": "beta"}}})

    body = await refusal(
        client, "update_memory", {"memory_id": stored["memory_id"], "metadata": {"speaker": "me"}}
    )
    (memory,) = (await call(client, "get_memories", {"memory_ids": [stored["memory_id"]]}))["memories"]

    assert body["error"] == "invalid_metadata" and "'speaker' is reserved" in body["message"]
    assert memory["metadata"] == {"phase": "beta"}


@pytest.mark.parametrize(
    ("metadata", "says"),
    [
        ({"owners": ["ana"]}, "a string, number or boolean"),
        ({"phase": None}, "a string, number or boolean"),
        ({"source_info": "x"}, "reserved"),
    ],
)
async def test_a_bad_filter_is_refused(client: Client, metadata: dict[str, Any], says: str) -> None:
    for tool, arguments in (("list_memories", {}), ("recall_memories", {"query": "anything"})):
        body = await refusal(client, tool, {**arguments, "filters": {"metadata": metadata}})

        assert body["error"] == "invalid_metadata"
        assert "filters.metadata" in body["message"] and says in body["message"], body["message"]
