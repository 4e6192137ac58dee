"""update_memory, duplicates on store, projects and time filters through the in-memory client."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ListRootsResult, Root

from cognitive_memory.service import MemoryService
from cognitive_memory.system import CognitiveSystem
from interfaces.mcp_server import create_server
from tests.mcp.tools import call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL


async def recalled(client: Client, query: str, **arguments: Any) -> list[dict[str, Any]]:
    body = await call(
        client, "recall_memories", {"query": query, "max_results": 20, "detail": "full", **arguments}
    )
    lists = body["memories"]
    return [*lists["core"], *lists["peripheral"], *lists["bridge"]]


async def refusal(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    body: dict[str, Any] = json.loads(result.content[0].text)  # type: ignore[union-attr]  # a text block
    assert body["success"] is False
    return body


async def test_an_update_changes_the_text_in_place_and_recall_finds_the_new_words_only(
    client: Client, real_system: CognitiveSystem
) -> None:
    stored = await call(
        client, "store_memory", {"text": "The nightly backup job runs at 02:00 on the vault host."}
    )
    memory_id = stored["memory_id"]
    await recalled(client, "nightly backup")  # one access before the update

    updated = await call(
        client,
        "update_memory",
        {
            "memory_id": memory_id,
            "text": "The nightly backup job runs at 04:30 on the archive host.",
            "tags": ["ops"],
        },
    )

    assert (updated["memory_id"], updated["changed"], updated["version"]) == (memory_id, ["text", "tags"], 1)
    assert updated["reembedded"] is True
    real_system.flush()
    by_archive = {m["id"]: m for m in await recalled(client, "archive host backup time")}
    assert by_archive[memory_id]["content"].startswith("The nightly backup job runs at 04:30")
    assert by_archive[memory_id]["access_count"] >= 1  # its access history survived the update
    assert by_archive[memory_id]["score"]["lexical"] > 0
    # The old words left the lexical index (and so "vault" alone is no longer evidence for it).
    assert real_system.records.words.search("vault", 10) == []
    assert memory_id not in {m["id"] for m in await recalled(client, "vault")}
    (memory,) = real_system.records.memories.get([memory_id])
    assert memory.tags == ("ops",)
    assert real_system.vectors.count() == 1


async def test_an_update_with_the_same_values_keeps_no_version(client: Client) -> None:
    stored = await call(
        client, "store_memory", {"text": "Use ruff for linting.", "context": {"tags": ["tooling"]}}
    )

    same = await call(client, "update_memory", {"memory_id": stored["memory_id"], "tags": ["tooling"]})

    assert (same["changed"], same.get("version")) == ([], None)


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"memory_id": "no-such-memory", "text": "new"}, "not_found"),
        ({"memory_id": "x"}, "not_found"),
        ({"memory_id": "x", "importance_score": 2}, "out_of_range"),
        ({"memory_id": "x", "text": ""}, "empty_text"),
        ({"memory_id": "x", "tags": "ops"}, "invalid_type"),
        ({"memory_id": "x", "hierarchy_level": 3}, "out_of_range"),
        ({"memory_id": 7, "text": "new"}, "invalid_type"),
    ],
)
async def test_update_refuses_bad_input_and_unknown_ids(
    client: Client, arguments: dict[str, Any], code: str
) -> None:
    if arguments == {"memory_id": "x"}:
        body = await refusal(client, "update_memory", arguments)
        assert "give at least one of" in body["message"]
        return
    body = await refusal(client, "update_memory", arguments)
    assert body["error"] == code


async def test_an_update_that_would_duplicate_another_memory_is_refused(client: Client) -> None:
    first = await call(client, "store_memory", {"text": "Staging runs Postgres 16."})
    second = await call(client, "store_memory", {"text": "Production runs Postgres 15."})

    body = await refusal(
        client, "update_memory", {"memory_id": second["memory_id"], "text": "staging runs  postgres 16."}
    )

    assert body["error"] == "duplicate"
    assert first["memory_id"] in body["message"]


async def test_a_loaded_memory_is_refused_with_the_file_to_edit(
    client: Client, real_system: CognitiveSystem, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Deploys\n\nDeploys happen on Tuesdays after the change review.\n")
    MemoryService(real_system).load_markdown(str(notes))
    (loaded,) = [m for batch in real_system.records.memories.batches() for m in batch]

    body = await refusal(client, "update_memory", {"memory_id": loaded.id, "text": "Deploys happen daily."})

    assert body["error"] == "loaded_memory"
    assert str(notes) in body["message"]


async def test_the_same_text_stored_twice_answers_duplicate_with_the_first_id(
    client: Client, real_system: CognitiveSystem
) -> None:
    first = await call(client, "store_memory", {"text": "The API rate limit is 600 requests a minute."})

    again = await call(client, "store_memory", {"text": "  the API rate limit is 600 requests   a minute. "})

    assert (again["duplicate"], again["memory_id"]) == (True, first["memory_id"])
    assert first["duplicate"] is False and first["novelty"] == 1.0
    assert real_system.records.memories.counts().total == 1


async def test_a_text_typed_with_decomposed_accents_is_the_same_memory_and_found_by_its_words(
    client: Client, real_system: CognitiveSystem
) -> None:
    first = await call(client, "store_memory", {"text": "The café on Müllerstraße opens at seven."})

    decomposed = "The cafe\u0301 on Mu\u0308llerstraße opens at seven."
    again = await call(client, "store_memory", {"text": decomposed})
    found = await call(client, "recall_memories", {"query": "Mu\u0308llerstraße", "detail": "full"})

    assert (again["duplicate"], again["memory_id"]) == (True, first["memory_id"])
    assert real_system.records.memories.counts().total == 1
    core = found["memories"]["core"]
    assert core[0]["id"] == first["memory_id"] and core[0]["score"]["words"] == 1.0


async def test_a_near_duplicate_is_stored_with_its_similar_memory_named(client: Client) -> None:
    first = await call(client, "store_memory", {"text": "The API rate limit is 600 requests per minute."})

    near = await call(client, "store_memory", {"text": "The API rate limit is 600 requests per minute!!"})

    assert near["duplicate"] is False
    assert [similar["id"] for similar in near["similar"]] == [first["memory_id"]]
    assert near["novelty"] < 0.08
    assert "update_memory" in near["message"]


async def test_novelty_stays_between_0_and_1_when_the_nearest_memory_points_away(
    client: Client, hash_system: CognitiveSystem
) -> None:
    # These two texts have a cosine of -0.4 under the hash encoder: 1 - cosine would say 1.4,
    # "more than nothing alike".
    await call(client, "store_memory", {"text": "Granite quarries ship by rail."})

    stored = await call(client, "store_memory", {"text": "Yachts moor in the marina."})
    planned = await call(client, "store_memory", {"text": "Yachts moor in the marina.", "dry_run": True})

    assert (stored["novelty"], planned["novelty"]) == (1.0, 0.0)


async def test_a_project_s_memories_are_not_recalled_from_another_project(client: Client) -> None:
    alpha = await call(
        client,
        "store_memory",
        {"text": "The alpha service deploys with Helm.", "context": {"project": "alpha"}},
    )
    shared = await call(
        client,
        "store_memory",
        {"text": "Every service deploys on weekdays only.", "context": {"project": "global"}},
    )

    from_beta = {m["id"] for m in await recalled(client, "how does the service deploy", project="beta")}
    from_all = {
        m["id"]
        for m in await recalled(
            client, "how does the service deploy", project="beta", filters={"projects": ["*"]}
        )
    }

    assert alpha["project"] == "alpha"
    assert from_beta == {shared["memory_id"]}
    assert from_all == {alpha["memory_id"], shared["memory_id"]}


async def test_the_same_text_in_two_projects_is_two_memories(client: Client) -> None:
    one = await call(
        client, "store_memory", {"text": "Run make check before pushing.", "context": {"project": "a"}}
    )
    two = await call(
        client, "store_memory", {"text": "Run make check before pushing.", "context": {"project": "b"}}
    )

    assert one["memory_id"] != two["memory_id"] and two["duplicate"] is False


async def test_time_filters_keep_memories_stored_in_the_range(client: Client) -> None:
    await call(client, "store_memory", {"text": "We decided to adopt trunk-based development."})
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()
    yesterday = (datetime.now(UTC) - timedelta(days=1)).date().isoformat()

    assert await recalled(client, "what did we decide", filters={"created_after": tomorrow}) == []
    assert len(await recalled(client, "what did we decide", filters={"created_after": yesterday})) == 1
    assert await recalled(client, "what did we decide", filters={"created_before": yesterday}) == []


@pytest.mark.parametrize(
    ("filters", "code"),
    [
        ({"created_after": "2024-13-45"}, "invalid_value"),
        ({"created_before": "last week"}, "invalid_value"),
        ({"created_before": 20240501}, "invalid_type"),
        ({"created_after": "2024-05-02", "created_before": "2024-05-01"}, "invalid_value"),
        ({"projects": [""]}, "empty_text"),
    ],
)
async def test_bad_dates_and_projects_are_refused(client: Client, filters: dict[str, Any], code: str) -> None:
    body = await refusal(client, "recall_memories", {"query": "anything", "filters": filters})

    assert body["error"] == code
    assert "Nothing was stored or changed" in body["message"] or "created_after" in body["message"]


async def test_a_project_name_with_a_star_is_refused(client: Client) -> None:
    body = await refusal(client, "store_memory", {"text": "x marks the spot", "context": {"project": "a*b"}})

    assert "project name" in body["message"]


async def test_the_client_s_first_root_chooses_the_project_by_its_git_top_level(
    real_system: CognitiveSystem, tmp_path: Path
) -> None:
    repository = tmp_path / "payments-api"
    (repository / ".git").mkdir(parents=True)
    (repository / "src").mkdir()
    asked: list[int] = []

    async def roots(_context: Any) -> ListRootsResult:
        asked.append(1)
        return ListRootsResult(roots=[Root(uri=(repository / "src").as_uri())])  # type: ignore[arg-type]  # pydantic coerces str

    # Roots are a handshake-era capability (deprecated in 2026-07-28): the legacy client offers them.
    server = create_server(real_system, session_id="s")
    async with Client(server, mode="legacy", list_roots_callback=roots) as client:
        stored = await call(client, "store_memory", {"text": "Refunds go through the ledger service."})
        lesson = await call(
            client, "session_lessons", {"lesson_content": "Ledger calls need idempotency keys."}
        )
        found = await recalled(client, "refunds ledger")

    assert (stored["project"], lesson["project"]) == ("payments-api", "payments-api")
    assert {m["id"] for m in found} == {stored["memory_id"], lesson["lesson_id"]}
    assert asked == [1]  # asked once per connection


async def test_a_server_project_wins_over_the_client_s_roots(
    real_system: CognitiveSystem, tmp_path: Path
) -> None:
    async def roots(_context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=tmp_path.as_uri())])  # type: ignore[arg-type]  # pydantic coerces str

    server = create_server(real_system, session_id="s", project="configured")
    async with Client(server, mode="legacy", list_roots_callback=roots) as client:
        stored = await call(client, "store_memory", {"text": "The configured project is used."})

    assert stored["project"] == "configured"


async def test_a_stateless_client_s_roots_cannot_be_asked_and_the_default_project_serves(
    real_system: CognitiveSystem, tmp_path: Path
) -> None:
    async def roots(_context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=tmp_path.as_uri())])  # type: ignore[arg-type]  # pydantic coerces str

    async with Client(create_server(real_system, session_id="s"), list_roots_callback=roots) as client:
        stored = await call(client, "store_memory", {"text": "Stateless requests have no back-channel."})

    assert stored["project"] == "default"


async def test_get_memories_shows_the_versions_an_update_kept(client: Client) -> None:
    stored = await call(client, "store_memory", {"text": "The on-call rotation changes on Mondays."})
    await call(
        client,
        "update_memory",
        {"memory_id": stored["memory_id"], "text": "The on-call rotation changes on Fridays."},
    )
    await call(client, "update_memory", {"memory_id": stored["memory_id"], "importance_score": 0.9})

    body = await call(client, "get_memories", {"memory_ids": [stored["memory_id"]], "include_history": True})

    (memory,) = body["memories"]
    assert (memory["content"], memory["importance_score"]) == (
        "The on-call rotation changes on Fridays.",
        0.9,
    )
    assert [(v["version"], v["content"], v["importance_score"]) for v in memory["history"]] == [
        (1, "The on-call rotation changes on Mondays.", 0.5),
        (2, "The on-call rotation changes on Fridays.", 0.5),
    ]
