"""The prompts (reflect, recall-context) and resources (memory://ID, recent, lessons) through the
SDK's in-memory client, in both protocol eras."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS, ListRootsResult, Root, TextContent, TextResourceContents

from cognitive_memory.errors import StorageError
from cognitive_memory.service import SHORT_ID_CHARS, MemoryService
from cognitive_memory.system import CognitiveSystem
from interfaces.mcp_prompts import REFLECTION_PROMPT
from interfaces.mcp_server import create_server
from tests.mcp.tools import call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL


@pytest.fixture(params=["current", "legacy"])
async def client(request: pytest.FixtureRequest, hash_system: CognitiveSystem) -> AsyncIterator[Client]:
    kwargs = {"mode": "legacy"} if request.param == "legacy" else {}
    async with Client(create_server(hash_system, session_id="s"), **kwargs) as connected:
        yield connected


async def prompt_text(client: Client, name: str, arguments: dict[str, str]) -> str:
    result = await client.get_prompt(name, arguments)
    (message,) = result.messages
    assert message.role == "user" and isinstance(message.content, TextContent)
    return message.content.text


async def read(client: Client, uri: str) -> str:
    result = await client.read_resource(uri)
    (content,) = result.contents
    assert isinstance(content, TextResourceContents)
    assert content.mime_type == "text/markdown" and str(content.uri) == uri
    return content.text


async def store(client: Client, text: str, **arguments: Any) -> str:
    return str((await call(client, "store_memory", {"text": text, **arguments}))["memory_id"])


async def lesson(client: Client, text: str, lesson_type: str = "warning") -> str:
    body = await call(client, "session_lessons", {"lesson_content": text, "lesson_type": lesson_type})
    return str(body["lesson_id"])


async def test_both_prompts_are_listed_with_their_arguments(client: Client) -> None:
    prompts = {p.name: p for p in (await client.list_prompts()).prompts}

    assert set(prompts) == {"reflect", "recall-context"}
    reflect_args = [(a.name, a.required) for a in prompts["reflect"].arguments or []]
    recall_args = [(a.name, a.required) for a in prompts["recall-context"].arguments or []]
    assert reflect_args == [("session_context", False)]
    assert recall_args == [("topic", True)]


async def test_reflect_asks_for_lessons_with_the_session_context_and_the_lessons_already_kept(
    client: Client,
) -> None:
    kept = await lesson(client, "Run the migrations before every deploy.")

    text = await prompt_text(client, "reflect", {"session_context": "Moving the billing jobs to queues"})

    assert text.startswith(REFLECTION_PROMPT)
    assert "This session: Moving the billing jobs to queues" in text
    assert f"- [warning] Run the migrations before every deploy. ({kept})" in text
    assert "session_lessons tool" in text


async def test_reflect_without_context_asks_to_look_back_over_the_session(client: Client) -> None:
    text = await prompt_text(client, "reflect", {})

    assert "Look back over this whole session." in text
    assert "already has" not in text  # no lessons kept yet


async def test_recall_context_brings_the_memories_about_the_topic(client: Client) -> None:
    wanted = await store(client, "Deploys go out on Tuesdays through the blue-green pipeline.")

    text = await prompt_text(client, "recall-context", {"topic": "blue-green deploys"})

    assert 'remembers about "blue-green deploys" (project default and global)' in text
    assert wanted[:SHORT_ID_CHARS] in text
    assert "Deploys go out on Tuesdays through the blue-green pipeline." in text


async def test_recall_context_says_when_nothing_is_remembered(client: Client) -> None:
    text = await prompt_text(client, "recall-context", {"topic": "kubernetes upgrades"})

    assert text == 'Cognitive Memory holds nothing about "kubernetes upgrades" (project default) yet.'


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("recall-context", {}, "Missing required arguments: {'topic'}."),
        ("recall-context", {"topic": "   "}, "topic must hold 1 to 10000 characters of text."),
        ("reflect", {"session_context": "x" * 2001}, "`session_context`: String should have at most 2000"),
        ("summarise", {}, "Unknown prompt: summarise; prompts/list names the prompts."),
    ],
)
async def test_bad_prompt_requests_are_invalid_params_errors_that_say_why(
    client: Client, name: str, arguments: dict[str, str], message: str
) -> None:
    with pytest.raises(MCPError) as refused:
        await client.get_prompt(name, arguments)

    assert refused.value.code == INVALID_PARAMS
    assert message in refused.value.message


async def test_the_project_lists_are_listed_and_the_templates_cover_ids(client: Client) -> None:
    listed = {str(r.uri): r for r in (await client.list_resources()).resources}
    templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}

    assert set(listed) == {"memory://recent", "memory://lessons"}
    assert all(r.mime_type == "text/markdown" and r.description for r in listed.values())
    assert templates == {"memory://{memory_id}", "memory://recent{?limit}", "memory://lessons{?limit}"}


async def test_a_memory_reads_whole_with_its_metadata(client: Client) -> None:
    text = "The staging database is rebuilt every night at 02:00 UTC.\nDo not keep data there."
    memory_id = await store(client, text, context={"tags": ["staging", "database"]})

    body = await read(client, f"memory://{memory_id}")

    assert body.startswith(f"# Memory {memory_id}\n")
    for line in (
        f"- Id: {memory_id}",
        "- Level: L1 (Context), type semantic",
        "- Project: default",
        "- Tags: staging, database",
        "- Source: 💭 Manual Entry",
    ):
        assert line in body.splitlines()
    assert "- Created: " in body and "- Importance: 0.50, strength " in body
    assert body.endswith("\n\n" + text)


async def test_an_unknown_or_forgotten_id_is_an_invalid_params_error(client: Client) -> None:
    forgotten = await store(client, "A note that will be forgotten.")
    await call(client, "forget_memories", {"memory_ids": [forgotten]})

    with pytest.raises(MCPError) as unknown:
        await client.read_resource("memory://no-such-memory")
    with pytest.raises(MCPError) as trashed:
        await client.read_resource(f"memory://{forgotten}")

    assert (unknown.value.code, trashed.value.code) == (INVALID_PARAMS, INVALID_PARAMS)
    assert unknown.value.message == "No memory has the id no-such-memory."
    assert "in the trash: memory_system trash restore ID" in trashed.value.message


async def test_recent_lists_the_newest_first_and_limit_bounds_it(client: Client) -> None:
    ids = [await store(client, f"Release note number {n} for the payments service.") for n in range(3)]

    everything = await read(client, "memory://recent")
    newest = await read(client, "memory://recent?limit=2")

    headings = [line.removeprefix("## ") for line in everything.splitlines() if line.startswith("## ")]
    assert headings == ids[::-1]
    assert everything.startswith("# Recent memories of project default (with the global ones)")
    assert "3 of 3, newest first" in everything
    assert [line for line in newest.splitlines() if line.startswith("## ")] == [
        f"## {ids[2]}",
        f"## {ids[1]}",
    ]
    assert "2 of 3, newest first" in newest


async def test_lessons_lists_only_session_lessons(client: Client) -> None:
    await store(client, "An ordinary memory about the office coffee machine.")
    kept = await lesson(client, "Pin the protobuf version: 5.x broke the generated clients.", "solution")

    body = await read(client, "memory://lessons")

    assert [line for line in body.splitlines() if line.startswith("## ")] == [f"## {kept}"]
    assert "Pin the protobuf version: 5.x broke the generated clients." in body
    assert "coffee" not in body


async def test_empty_lists_say_so(client: Client) -> None:
    assert (await read(client, "memory://lessons")).endswith("\n\nNone yet.")


@pytest.mark.parametrize("limit", ["0", "abc", "101"])
async def test_a_bad_limit_is_refused(client: Client, limit: str) -> None:
    with pytest.raises(MCPError) as refused:
        await client.read_resource(f"memory://recent?limit={limit}")

    assert refused.value.code == INVALID_PARAMS
    assert "limit must be a whole number from 1 to 100" in refused.value.message


async def test_the_lists_are_the_project_the_client_s_roots_choose(
    hash_system: CognitiveSystem, tmp_path: Path
) -> None:
    async def roots(_context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=(tmp_path / "checkout-web").as_uri())])  # type: ignore[arg-type]  # pydantic coerces str

    (tmp_path / "checkout-web").mkdir()
    server = create_server(hash_system, session_id="s")
    async with Client(server, mode="legacy", list_roots_callback=roots) as client:
        ours = await store(client, "The checkout page caches prices for a minute.")
        other = await store(
            client, "The mobile app ships every second week.", context={"project": "mobile-app"}
        )
        shared = await store(client, "Every service logs in JSON.", context={"project": "global"})
        recent = await read(client, "memory://recent")
        reflection = await prompt_text(client, "reflect", {})
        recalled = await prompt_text(client, "recall-context", {"topic": "checkout prices"})

    assert recent.startswith("# Recent memories of project checkout-web")
    assert ours in recent and shared in recent and other not in recent
    assert "project checkout-web" in recalled and ours[:SHORT_ID_CHARS] in recalled
    assert "Look back over this whole session." in reflection


async def test_a_storage_failure_keeps_its_message_and_a_crash_is_reported_without_details(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    def storage_down(*_args: Any, **_kwargs: Any) -> None:
        raise StorageError("SQLite cannot be read: disk I/O error.")

    def crash(*_args: Any, **_kwargs: Any) -> None:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(MemoryService, "retrieve_memories", storage_down)
    monkeypatch.setattr(MemoryService, "list_memories", crash)
    with pytest.raises(MCPError) as failed:
        await client.get_prompt("recall-context", {"topic": "deploys"})
    with pytest.raises(MCPError) as crashed:
        await client.get_prompt("reflect", {})

    assert (failed.value.code, failed.value.message) == (
        INTERNAL_ERROR,
        "SQLite cannot be read: disk I/O error.",
    )
    assert crashed.value.code == INTERNAL_ERROR
    assert crashed.value.message == "Prompt reflect failed unexpectedly; the server logged the details."
