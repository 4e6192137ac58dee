"""get_memories and list_memories through the SDK's in-memory client: whole records, missing ids,
earlier versions, pages with a cursor, filters, scope, and refusals of every hostile argument."""

from __future__ import annotations

import base64
import json
import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from mcp import Client
from mcp.types import TextContent

from cognitive_memory.core.memory import SourceKind
from cognitive_memory.system import CognitiveSystem
from tests.mcp.tools import call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL

LONG_TEXT = (
    "The nightly export job writes one parquet file per tenant to the cold bucket, then verifies "
    "the row counts against the warehouse; when a count differs it retries twice and pages the data "
    "on-call with the tenant id, the two counts and the path of the file it wrote last night."
)


async def refusal(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.content
    block = result.content[0]
    assert isinstance(block, TextContent)
    body: dict[str, Any] = json.loads(block.text)
    assert body["success"] is False
    return body


async def page(client: Client, **arguments: Any) -> dict[str, Any]:
    return await call(client, "list_memories", arguments)


def add_version(system: CognitiveSystem, memory_id: str, version: int, content: str) -> None:
    """A row as update_memory keeps it (written directly: this test is about reading versions)."""
    with closing(sqlite3.connect(system.records.path)) as conn, conn:
        conn.execute(
            "INSERT INTO memory_versions (memory_id, version, content, hierarchy_level, memory_type, "
            "importance_score, tags, metadata, project, replaced_at, replaced_by_session) "
            "VALUES (?, ?, ?, 1, 'semantic', 0.5, '[\"old\"]', '{}', 'default', ?, 'earlier-session')",
            (memory_id, version, content, 1714550400.0 + version),
        )


async def test_get_memories_returns_whole_records_in_the_order_asked_and_names_the_missing(
    client: Client, real_system: CognitiveSystem
) -> None:
    first = await call(client, "store_memory", {"text": LONG_TEXT, "context": {"tags": ["export"]}})
    second = await call(client, "store_memory", {"text": "The warehouse lives in eu-west-1."})

    result = await client.call_tool(
        "get_memories", {"memory_ids": [second["memory_id"], "no-such-memory", first["memory_id"]]}
    )

    assert not result.is_error
    body = result.structured_content
    assert body is not None
    assert [m["id"] for m in body["memories"]] == [second["memory_id"], first["memory_id"]]
    assert (body["missing"], body["message"]) == (["no-such-memory"], "Found 2 of 3 memories")
    record = body["memories"][1]
    assert record["content"] == LONG_TEXT and record["tags"] == ["export"]
    assert (record["project"], record["access_count"]) == ("default", 0) and "history" not in record
    text = result.content[0].text  # type: ignore[union-attr]  # the first block is the text answer
    assert LONG_TEXT in text and "Not found: no-such-memory" in text
    real_system.flush()
    again = await call(client, "get_memories", {"memory_ids": [first["memory_id"]]})
    assert again["memories"][0]["access_count"] == 1  # opening is a use: it raises strength
    assert again["memories"][0]["strength"] > record["strength"]


async def test_include_history_returns_the_earlier_versions_oldest_first(
    client: Client, real_system: CognitiveSystem
) -> None:
    edited = await call(client, "store_memory", {"text": "Deploys go out on Thursdays."})
    plain = await call(client, "store_memory", {"text": "The staging cluster has three nodes."})
    add_version(real_system, edited["memory_id"], 2, "Deploys go out on Wednesdays.")
    add_version(real_system, edited["memory_id"], 1, "Deploys go out on Tuesdays.")

    body = await call(
        client,
        "get_memories",
        {"memory_ids": [edited["memory_id"], plain["memory_id"]], "include_history": True},
    )
    without = await call(client, "get_memories", {"memory_ids": [edited["memory_id"]]})

    history = body["memories"][0]["history"]
    assert [(v["version"], v["content"]) for v in history] == [
        (1, "Deploys go out on Tuesdays."),
        (2, "Deploys go out on Wednesdays."),
    ]
    assert history[0]["tags"] == ["old"] and history[0]["replaced_by_session"] == "earlier-session"
    assert datetime.fromisoformat(history[0]["replaced_at"]) == datetime.fromtimestamp(1714550401.0, UTC)
    assert body["memories"][1]["history"] == []
    assert "history" not in without["memories"][0]


async def test_list_memories_pages_through_25_memories_with_a_cursor(
    client: Client, real_system: CognitiveSystem
) -> None:
    stored = [
        o.memory.id
        for o in real_system.store_many([f"Runbook step {n}: check gauge {n}." for n in range(25)])
    ]

    first = await page(client, limit=10)
    second = await page(client, limit=10, cursor=first["next_cursor"])
    third = await page(client, limit=10, cursor=second["next_cursor"])

    seen = [m["id"] for p in (first, second, third) for m in p["memories"]]
    assert seen == list(reversed(stored))
    assert [len(p["memories"]) for p in (first, second, third)] == [10, 10, 5]
    assert {p["total"] for p in (first, second, third)} == {25}
    assert "next_cursor" not in third and first["order_by"] == "created"
    assert first["message"] == "10 of 25 memories, newest first"


async def test_pages_after_writes_between_them_neither_repeat_nor_skip_a_memory(client: Client) -> None:
    stored = [
        (await call(client, "store_memory", {"text": f"Release checklist step {n}: {word}."}))["memory_id"]
        for n, word in enumerate(["tag", "build", "sign", "upload", "announce", "watch", "close"])
    ]
    first = await page(client, limit=3)

    await call(client, "store_memory", {"text": "A note stored while the list was read."})
    await call(client, "forget_memories", {"memory_ids": [stored[2]]})
    rest = await page(client, limit=3, cursor=first["next_cursor"])

    assert [m["id"] for m in first["memories"]] == stored[:3:-1]
    assert [m["id"] for m in rest["memories"]] == [stored[3], stored[1], stored[0]]
    assert "next_cursor" not in rest and rest["total"] == 7


@pytest.mark.stores(
    "sqlite",
    reason="cursors of the version before opaque ones were SQLite rowids; no PostgreSQL store handed one out",
)
async def test_a_cursor_the_previous_version_handed_out_continues_the_listing(
    client: Client, hash_system: CognitiveSystem
) -> None:
    stored = [
        (await call(client, "store_memory", {"text": f"Incident timeline entry {n} for the outage."}))[
            "memory_id"
        ]
        for n in range(5)
    ]
    with closing(sqlite3.connect(hash_system.records.path)) as conn:
        value, rowid = conn.execute(
            "SELECT timestamp, rowid FROM memories WHERE id = ?", (stored[3],)
        ).fetchone()
    # Made as cursors were before the store made them: url-safe base64 of the order, value and rowid.
    fields = json.dumps({"o": "created", "v": value, "r": rowid}, separators=(",", ":"))
    handed_out = base64.urlsafe_b64encode(fields.encode()).decode().rstrip("=")

    rest = await page(client, limit=2, cursor=handed_out)
    last = await page(client, limit=2, cursor=rest["next_cursor"])

    assert [m["id"] for m in rest["memories"]] == [stored[2], stored[1]]
    assert [m["id"] for m in last["memories"]] == [stored[0]] and "next_cursor" not in last


async def test_created_after_tomorrow_returns_nothing(client: Client) -> None:
    await call(client, "store_memory", {"text": "We decided to adopt trunk-based development."})
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()

    after = await page(client, filters={"created_after": tomorrow})
    before = await page(client, filters={"created_before": tomorrow})

    assert (after["memories"], after["total"], after.get("next_cursor")) == ([], 0, None)
    assert after["message"] == "No memories match"
    assert before["total"] == 1


async def test_list_sees_the_project_and_global_memories_as_recall_does(client: Client) -> None:
    for project in ("api", "web", "global"):
        await call(
            client, "store_memory", {"text": f"Notes of the {project} team.", "context": {"project": project}}
        )

    def projects(body: dict[str, Any]) -> list[str]:
        return [m["project"] for m in body["memories"]]

    assert projects(await page(client, project="api")) == ["global", "api"]
    assert projects(await page(client)) == ["global"]
    assert projects(await page(client, filters={"projects": ["web"]})) == ["web"]
    assert projects(await page(client, filters={"projects": ["*"]})) == ["global", "web", "api"]


async def test_order_by_importance_and_tag_filters_combine(client: Client) -> None:
    for text, importance, tags in (
        ("Rotate the database password quarterly.", 0.9, ["ops"]),
        ("The office plants need water on Mondays.", 0.1, ["ops"]),
        ("Prefer small pull requests.", 0.6, ["dev"]),
    ):
        await call(
            client, "store_memory", {"text": text, "context": {"importance_score": importance, "tags": tags}}
        )

    body = await page(client, order_by="importance", filters={"tags": ["ops"]})

    assert [m["importance_score"] for m in body["memories"]] == [0.9, 0.1]
    assert body["total"] == 2 and body["message"].endswith("most important first")


async def test_both_tools_are_read_only_idempotent_and_publish_schemas(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}

    for name in ("get_memories", "list_memories"):
        annotations = tools[name].annotations
        assert annotations is not None and tools[name].output_schema
        assert (annotations.read_only_hint, annotations.idempotent_hint) == (True, True)
    listing = tools["list_memories"].input_schema["properties"]
    assert (listing["limit"]["minimum"], listing["limit"]["maximum"], listing["limit"]["default"]) == (
        1,
        100,
        20,
    )
    assert "required" not in tools["get_memories"].input_schema  # memory_ids or keys; neither: missing_field


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({}, "missing_field"),
        ({"memory_ids": "abc"}, "invalid_type"),
        ({"memory_ids": [1, 2]}, "invalid_type"),
        ({"memory_ids": []}, "invalid_type"),
        ({"memory_ids": [""]}, "empty_text"),
        ({"memory_ids": ["x" * 101]}, "text_too_long"),
        ({"memory_ids": [f"id-{n}" for n in range(101)]}, "too_many_items"),
        ({"memory_ids": ["a"], "include_history": "maybe"}, "invalid_type"),
    ],
)
async def test_get_memories_refuses_hostile_arguments(
    client: Client, arguments: dict[str, Any], code: str
) -> None:
    assert (await refusal(client, "get_memories", arguments))["error"] == code


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"limit": 0}, "out_of_range"),
        ({"limit": 101}, "out_of_range"),
        ({"limit": "ten"}, "invalid_type"),
        ({"order_by": "random"}, "invalid_value"),
        ({"order_by": 3}, "invalid_value"),
        ({"cursor": 5}, "invalid_type"),
        ({"cursor": ""}, "empty_text"),
        ({"cursor": "x" * 201}, "text_too_long"),
        ({"cursor": "not-a-cursor"}, "invalid_cursor"),
        ({"cursor": "eyJvIjoiY3JlYXRlZCIsInYiOjEuMCwiciI6IjEifQ"}, "invalid_cursor"),
        ({"filters": {"created_after": "2024-13-45"}}, "invalid_value"),
        ({"filters": {"created_after": "2024-05-02", "created_before": "2024-05-01"}}, "invalid_value"),
        ({"filters": {"colour": ["red"]}}, "unknown_field"),
        ({"filters": {"hierarchy_levels": [3]}}, "invalid_value"),
        ({"filters": "tags=ops"}, "invalid_type"),
        ({"project": "a*b"}, "invalid_value"),
    ],
)
async def test_list_memories_refuses_hostile_arguments(
    client: Client, arguments: dict[str, Any], code: str
) -> None:
    body = await refusal(client, "list_memories", arguments)

    assert body["error"] == code, body


async def test_a_cursor_from_another_order_is_refused_with_the_way_out(client: Client) -> None:
    for n in range(3):
        await call(client, "store_memory", {"text": f"Checklist item number {n} for the release."})
    created = await page(client, limit=1)

    body = await refusal(
        client, "list_memories", {"order_by": "importance", "cursor": created["next_cursor"]}
    )

    assert body["error"] == "invalid_cursor"
    assert "'created'" in body["message"] and "without a cursor" in body["message"]


async def test_a_turn_stored_with_a_speaker_and_a_lesson_show_them_in_metadata(
    client: Client, hash_system: CognitiveSystem
) -> None:
    turn = await call(
        client,
        "store_memory",
        {"text": "Ada: we ship on Friday.", "context": {"speaker": "Ada", "source_info": "chat"}},
    )
    lesson = await call(
        client, "session_lessons", {"lesson_content": "Pin the base image digest.", "lesson_type": "warning"}
    )

    body = await call(client, "get_memories", {"memory_ids": [turn["memory_id"], lesson["lesson_id"]]})

    shown_turn, shown_lesson = body["memories"]
    assert shown_turn["metadata"] == {"source_info": "chat", "speaker": "Ada"}
    assert shown_turn["source_info"] == "💭 chat"
    assert shown_lesson["metadata"]["loader_type"] == "session_lesson"
    assert shown_lesson["source_info"] == "📝 Session Lesson (warning)"
    stored_turn, stored_lesson = hash_system.records.memories.get([turn["memory_id"], lesson["lesson_id"]])
    assert (stored_turn.speaker, dict(stored_turn.metadata)) == ("Ada", {"source_info": "chat"})
    assert stored_lesson.source is SourceKind.SESSION_LESSON and "loader_type" not in stored_lesson.metadata


async def test_an_updated_turn_keeps_its_speaker_and_its_version_shows_it(client: Client) -> None:
    turn = await call(
        client, "store_memory", {"text": "Ada: we ship on Friday.", "context": {"speaker": "Ada"}}
    )
    await call(client, "update_memory", {"memory_id": turn["memory_id"], "text": "Ada: we ship on Monday."})

    body = await call(client, "get_memories", {"memory_ids": [turn["memory_id"]], "include_history": True})

    (memory,) = body["memories"]
    assert memory["metadata"] == {"speaker": "Ada"}
    assert [(v["content"], v["metadata"]) for v in memory["history"]] == [
        ("Ada: we ship on Friday.", {"speaker": "Ada"})
    ]


def nulls(node: Any, path: str = "") -> list[str]:
    """Where ``node`` holds a null, a memory's own metadata aside (it is the caller's)."""
    if node is None:
        return [path]
    if isinstance(node, dict):
        return [
            found
            for key, value in node.items()
            if key != "metadata"
            for found in nulls(value, f"{path}.{key}")
        ]
    if isinstance(node, list):
        return [found for n, value in enumerate(node) for found in nulls(value, f"{path}[{n}]")]
    return []


async def test_list_and_get_records_carry_no_nulls(client: Client) -> None:
    stored = await call(client, "store_memory", {"text": "The runbook lives in the ops wiki."})
    await call(client, "update_memory", {"memory_id": stored["memory_id"], "tags": ["ops"]})

    listed = await page(client)
    read = await call(client, "get_memories", {"memory_ids": [stored["memory_id"], "no-such-id"]})
    history = await call(
        client, "get_memories", {"memory_ids": [stored["memory_id"]], "include_history": True}
    )

    assert [nulls(body) for body in (listed, read, history)] == [[], [], []]
    record = read["memories"][0]
    assert {"rank", "similarity_score", "score", "history", "source_date"}.isdisjoint(record)
    assert "next_cursor" not in listed and history["memories"][0]["history"][0]["version"] == 1


async def test_list_memories_text_filter_tolerates_a_typo(client: Client) -> None:
    wanted = await call(client, "store_memory", {"text": "Use context managers in Python to close files."})
    await call(client, "store_memory", {"text": "The warehouse lives in eu-west-1."})

    typo = await page(client, text="pyton contxt")
    exact = await page(client, text="Python")
    none = await page(client, text="zebra")

    assert [m["id"] for m in typo["memories"]] == [wanted["memory_id"]] and typo["total"] == 1
    assert [m["id"] for m in exact["memories"]] == [wanted["memory_id"]]
    assert none["total"] == 0 and none["memories"] == []


async def test_list_memories_refuses_a_text_without_a_word(client: Client) -> None:
    body = await refusal(client, "list_memories", {"text": "?!"})

    assert body["error"] == "invalid_value" and "no word" in body["message"]


async def test_list_memories_overview_counts_the_tags_and_sessions_of_the_project_or_of_all(
    client: Client, hash_system: CognitiveSystem
) -> None:
    for text, tags, project in (
        ("Kafka lag alert fired at noon.", ["ops", "kafka"], "web"),
        ("The ops runbook moved to the wiki.", ["ops"], "web"),
        ("Billing invoices are sent monthly.", ["billing"], "api"),
    ):
        await call(client, "store_memory", {"text": text, "context": {"tags": tags, "project": project}})

    web = await page(client, project="web", overview=True, limit=1)
    every = await page(client, filters={"projects": ["*"]}, overview=True)
    plain = await page(client, project="web")
    text = await client.call_tool("list_memories", {"project": "web", "overview": True})

    assert web["overview"]["tags"] == [{"tag": "ops", "memories": 2}, {"tag": "kafka", "memories": 1}]
    (session,) = web["overview"]["sessions"]
    assert session["session"] == "session-under-test" and session["memories"] == 2
    assert session["first"] <= session["last"]
    assert {t["tag"]: t["memories"] for t in every["overview"]["tags"]} == {
        "ops": 2,
        "kafka": 1,
        "billing": 1,
    }
    assert every["overview"]["sessions"][0]["memories"] == 3
    assert plain.get("overview") is None
    block = text.content[0]
    assert isinstance(block, TextContent)
    assert "🏷️ Tags, most used first: ops (2), kafka (1)" in block.text
    assert "session-under-test: 2 memories" in block.text
