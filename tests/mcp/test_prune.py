"""prune_memories through the SDK's in-memory client: a dry run first, a token for exactly its list,
pruned memories in the trash (restorable), loaded memories never pruned."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from cognitive_memory.core.pruning import PruneCriteria, make_token
from cognitive_memory.lifecycle.forgetting import plan_prune
from cognitive_memory.service import MemoryService
from cognitive_memory.system import CognitiveSystem
from tests.mcp.tools import call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL


async def store(client: Client, text: str, tags: list[str], importance: float = 0.5) -> str:
    context = {"tags": tags, "importance_score": importance}
    return str((await call(client, "store_memory", {"text": text, "context": context}))["memory_id"])


async def error_of(client: Client, arguments: dict[str, Any]) -> str:
    result = await client.call_tool("prune_memories", arguments)
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]  # the first block is the text answer
    assert "Traceback" not in text
    return text


def memory_ids(system: CognitiveSystem) -> set[str]:
    with sqlite3.connect(system.records.path) as conn:
        return {row[0] for row in conn.execute("SELECT id FROM memories")}


async def test_prune_is_annotated_destructive(client: Client) -> None:
    (tool,) = [tool for tool in (await client.list_tools()).tools if tool.name == "prune_memories"]
    assert tool.annotations is not None and tool.annotations.destructive_hint is True


async def test_a_dry_run_changes_nothing_and_the_real_prune_takes_exactly_its_list(
    client: Client, real_system: CognitiveSystem
) -> None:
    noise = [
        await store(client, f"Scratch note {n} about the build cache.", ["scratch"], 0.1) for n in range(3)
    ]
    keep = await store(client, "The release checklist lives in docs/release.md.", ["docs"], 0.9)
    before = memory_ids(real_system)

    plan = await call(client, "prune_memories", {"tags": ["scratch"], "keep_latest": 1})

    assert plan["dry_run"] is True and memory_ids(real_system) == before
    assert [item["id"] for item in plan["memories"]] == noise[:2]
    assert plan["memories"][0]["why"] == ["tagged scratch"]
    assert plan["memories"][0]["preview"] == "Scratch note 0 about the build cache."
    assert plan["confirm"]

    done = await call(
        client,
        "prune_memories",
        {"tags": ["scratch"], "keep_latest": 1, "dry_run": False, "confirm": plan["confirm"]},
    )

    assert sorted(item["id"] for item in done["memories"]) == sorted(noise[:2])
    assert memory_ids(real_system) == before - set(noise[:2])
    trash = MemoryService(real_system).trash_list()
    assert sorted((entry.id, entry.reason) for entry in trash.entries) == sorted(
        (i, "pruned") for i in noise[:2]
    )
    assert keep in memory_ids(real_system)

    restored = MemoryService(real_system).trash_restore(noise[:2])

    assert sorted(restored.restored) == sorted(noise[:2]) and memory_ids(real_system) == before


async def test_a_token_for_another_set_or_a_changed_set_is_refused(
    client: Client, real_system: CognitiveSystem
) -> None:
    await store(client, "Old scratch note about flaky tests.", ["scratch"])
    await store(client, "Draft idea about caching the dependency graph.", ["draft"])
    scratch = await call(client, "prune_memories", {"tags": ["scratch"]})
    before = memory_ids(real_system)

    other = await error_of(client, {"tags": ["draft"], "dry_run": False, "confirm": scratch["confirm"]})
    await store(client, "Another scratch note, stored after the dry run.", ["scratch"])
    changed = await error_of(client, {"tags": ["scratch"], "dry_run": False, "confirm": scratch["confirm"]})
    missing = await error_of(client, {"tags": ["scratch"], "dry_run": False})
    forged = await error_of(client, {"tags": ["scratch"], "dry_run": False, "confirm": "not-a-token"})

    assert '"token_mismatch"' in other and '"token_mismatch"' in changed
    assert '"confirm_required"' in missing and '"invalid_token"' in forged
    assert before <= memory_ids(real_system)


async def test_an_expired_token_is_refused(client: Client, real_system: CognitiveSystem) -> None:
    memory_id = await store(client, "Scratch note about an old benchmark run.", ["scratch"])
    criteria = PruneCriteria(tags=("scratch",))
    listed = plan_prune(real_system, criteria).candidates  # makes the secret
    secret = real_system.records.properties.get("prune_secret") or ""
    expired = make_token(secret, criteria, listed, int(time.time()) - 1)

    text = await error_of(client, {"tags": ["scratch"], "dry_run": False, "confirm": expired})

    assert '"token_expired"' in text and memory_id in memory_ids(real_system)


async def test_an_empty_prune_is_refused(client: Client) -> None:
    text = await error_of(client, {"keep_latest": 5})
    assert '"no_criteria"' in text


async def test_loaded_memories_are_never_pruned(
    client: Client, real_system: CognitiveSystem, tmp_path: Path
) -> None:
    note = tmp_path / "runbook.md"
    note.write_text("# Runbook\n\nRestart the ingest worker when the queue backs up past ten thousand.\n")
    MemoryService(real_system).load_markdown(str(note))
    loaded = memory_ids(real_system)
    mine = await store(client, "A note of mine about the ingest worker.", [], 0.2)

    plan = await call(client, "prune_memories", {"max_importance": 1.0})
    done = await call(
        client, "prune_memories", {"max_importance": 1.0, "dry_run": False, "confirm": plan["confirm"]}
    )

    assert [item["id"] for item in plan["memories"]] == [mine]
    assert [item["id"] for item in done["memories"]] == [mine]
    assert memory_ids(real_system) == loaded


async def prune_with(client: Client, criteria: dict[str, Any], token: str) -> Any:
    return await client.call_tool("prune_memories", {**criteria, "dry_run": False, "confirm": token})


async def test_a_token_prunes_once_even_after_the_pruned_memories_were_restored(
    client: Client, real_system: CognitiveSystem
) -> None:
    memory_id = await store(client, "Scratch note about a one-off profiling run.", ["scratch"])
    token = (await call(client, "prune_memories", {"tags": ["scratch"]}))["confirm"]
    await call(client, "prune_memories", {"tags": ["scratch"], "dry_run": False, "confirm": token})
    MemoryService(real_system).trash_restore([memory_id])

    text = await error_of(client, {"tags": ["scratch"], "dry_run": False, "confirm": token})

    assert '"token_used"' in text and "dry run again" in text
    assert memory_id in memory_ids(real_system)
    fresh = (await call(client, "prune_memories", {"tags": ["scratch"]}))["confirm"]
    assert fresh != token
    assert not (await prune_with(client, {"tags": ["scratch"]}, fresh)).is_error


async def test_a_token_is_refused_once_a_listed_memory_changed(
    client: Client, real_system: CognitiveSystem
) -> None:
    memory_id = await store(client, "Scratch: the staging cluster has 3 nodes.", ["scratch"])
    token = (await call(client, "prune_memories", {"tags": ["scratch"]}))["confirm"]
    changed = "The staging cluster has 5 nodes; keep this, it is the runbook's source."
    await call(client, "update_memory", {"memory_id": memory_id, "text": changed})

    text = await error_of(client, {"tags": ["scratch"], "dry_run": False, "confirm": token})

    assert '"token_mismatch"' in text and memory_id in memory_ids(real_system)
