"""The trash through the SDK's in-memory client: forget moves a memory there whole, restore brings it
back whole, and the trash is purged after COGNITIVE_MEMORY_TRASH_DAYS."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from mcp import Client

from cognitive_memory.main import build_system
from cognitive_memory.service import MemoryService
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem
from tests.mcp.tools import call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL


async def recalled_ids(client: Client, query: str) -> set[str]:
    # Full detail: whole ids, as the other tools answer with them (brief ones are short).
    arguments = {"query": query, "max_results": 20, "project": "ops", "detail": "full"}
    lists = (await call(client, "recall_memories", arguments))["memories"]
    return {memory["id"] for memory in lists["core"] + lists["peripheral"] + lists["bridge"]}


def stored_rows(system: CognitiveSystem, memory_id: str) -> tuple[list[object], ...]:
    """Every column of the memory's row, its versions and its user links, as SQLite holds them."""
    with sqlite3.connect(system.records.path) as conn:
        return (
            conn.execute("SELECT * FROM memories WHERE id = ?", (memory_id,)).fetchall(),
            conn.execute("SELECT * FROM memory_versions WHERE memory_id = ?", (memory_id,)).fetchall(),
            conn.execute("SELECT * FROM relations WHERE ? IN (from_id, to_id)", (memory_id,)).fetchall(),
        )


async def store(client: Client, text: str, **context: object) -> str:
    body = await call(client, "store_memory", {"text": text, "context": {**context, "project": "ops"}})
    return str(body["memory_id"])


async def test_forget_moves_a_memory_to_the_trash_out_of_recall_list_get_and_the_index(
    client: Client, real_system: CognitiveSystem
) -> None:
    gone = await store(client, "The backup job runs at 02:00 on the primary database host.")
    kept = await store(client, "The backup job writes its logs under /var/log/backup.")

    body = await call(client, "forget_memories", {"memory_ids": [gone]})

    assert body["forgotten"] == [gone]
    assert await recalled_ids(client, "when does the backup job run") == {kept}
    listed = await call(client, "list_memories", {"project": "ops"})
    assert [memory["id"] for memory in listed["memories"]] == [kept]
    got = await call(client, "get_memories", {"memory_ids": [gone]})
    assert (got["memories"], got["missing"], got["in_trash"]) == ([], [gone], [gone])
    assert "in the trash" in got["message"]
    real_system.flush()
    assert real_system.vectors.ids() == [kept]
    trash = MemoryService(real_system).trash_list()
    assert [(e.id, e.reason, e.trashed_by) for e in trash.entries] == [
        (gone, "forgotten", "session-under-test")
    ]
    assert trash.entries[0].preview.startswith("The backup job runs at 02:00")


async def test_restore_brings_a_forgotten_memory_back_whole(
    client: Client, real_system: CognitiveSystem
) -> None:
    memory_id = await store(
        client, "Rotate the TLS certificates of the edge proxies every sixty days.", tags=["tls", "ops"]
    )
    other = await store(client, "The edge proxies run HAProxy 2.8 behind the load balancer.")
    await call(client, "link_memories", {"from_id": memory_id, "to_id": other, "relation": "relates_to"})
    await call(client, "update_memory", {"memory_id": memory_id, "importance_score": 0.9})
    real_system.flush()
    before = stored_rows(real_system, memory_id)
    await call(client, "forget_memories", {"memory_ids": [memory_id]})
    assert stored_rows(real_system, memory_id) == ([], [], [])

    restored = MemoryService(real_system).trash_restore([memory_id, "not-in-the-trash"])

    assert (restored.restored, restored.missing) == ([memory_id], ["not-in-the-trash"])
    assert stored_rows(real_system, memory_id) == before
    (memory,) = (await call(client, "get_memories", {"memory_ids": [memory_id], "include_history": True}))[
        "memories"
    ]
    assert (memory["tags"], memory["project"], memory["importance_score"]) == (["tls", "ops"], "ops", 0.9)
    assert [version["importance_score"] for version in memory["history"]] == [0.5]
    related = await call(client, "related_memories", {"memory_id": memory_id})
    assert [item["id"] for item in related["related"]] == [other]
    assert memory_id in await recalled_ids(client, "how often are the TLS certificates rotated")
    real_system.flush()
    assert sorted(real_system.vectors.ids()) == sorted([memory_id, other])
    assert MemoryService(real_system).trash_list().total == 0


async def test_links_between_memories_forgotten_together_come_back_whichever_is_restored_first(
    client: Client, real_system: CognitiveSystem
) -> None:
    first = await store(client, "The nightly report is generated from the warehouse replica.")
    second = await store(client, "The warehouse replica lags the primary by about five minutes.")
    await call(client, "link_memories", {"from_id": first, "to_id": second, "relation": "caused_by"})
    await call(client, "forget_memories", {"memory_ids": [first, second]})
    service = MemoryService(real_system)

    service.trash_restore([second])
    service.trash_restore([first])

    related = await call(client, "related_memories", {"memory_id": first})
    assert [(item["id"], item["relation"]) for item in related["related"]] == [(second, "caused_by")]


async def test_the_trash_is_purged_at_start_up_after_the_trash_days(
    client: Client, real_system: CognitiveSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = await store(client, "An old note about the retired FTP server.")
    recent = await store(client, "A recent note about the SFTP migration.")
    await call(client, "forget_memories", {"memory_ids": [old, recent]})
    path = real_system.records.path
    with sqlite3.connect(path) as conn:  # forgotten three days ago
        conn.execute("UPDATE trash SET trashed_at = trashed_at - 3 * 86400 WHERE id = ?", (old,))
    monkeypatch.setenv("COGNITIVE_MEMORY_TRASH_DAYS", "2")

    reopened = build_system(Settings(env_file=None), encoder=real_system.encoder)
    try:
        assert [entry.id for entry in MemoryService(reopened).trash_list().entries] == [recent]
    finally:
        reopened.close()


async def test_a_failing_statement_mid_move_leaves_the_memory_in_place(
    client: Client, real_system: CognitiveSystem, data_dir: Path
) -> None:
    memory_id = await store(client, "The on-call rotation changes every Monday at 10:00.")
    with sqlite3.connect(real_system.records.path) as conn:  # the delete fails after the copy
        conn.execute(
            "CREATE TRIGGER refuse BEFORE DELETE ON memories BEGIN SELECT RAISE(ABORT, 'disk gone'); END"
        )

    result = await client.call_tool("forget_memories", {"memory_ids": [memory_id]})

    assert result.is_error
    got = await call(client, "get_memories", {"memory_ids": [memory_id]})
    assert [m["id"] for m in got["memories"]] == [memory_id]
    assert MemoryService(real_system).trash_list().total == 0
    assert real_system.records.outbox.pending() == []
    assert memory_id in await recalled_ids(client, "when does the on-call rotation change")


async def test_restore_skips_and_reports_a_link_that_would_close_a_supersedes_cycle(
    client: Client, real_system: CognitiveSystem
) -> None:
    a = await store(client, "Deploy with the v3 pipeline (blue-green, automatic rollback).")
    b = await store(client, "Deploy with the v2 pipeline (canary by hand).")
    c = await store(client, "Deploy with the v1 shell script on the build host.")
    await call(client, "link_memories", {"from_id": a, "to_id": b, "relation": "supersedes"})
    await call(client, "link_memories", {"from_id": b, "to_id": c, "relation": "supersedes"})
    await call(client, "forget_memories", {"memory_ids": [b]})
    await call(client, "link_memories", {"from_id": c, "to_id": a, "relation": "supersedes"})

    restored = MemoryService(real_system).trash_restore([b])

    with sqlite3.connect(real_system.records.path) as conn:
        links = conn.execute("SELECT from_id, to_id FROM relations WHERE relation = 'supersedes'").fetchall()
    assert sorted(links) == sorted([(a, b), (c, a)])
    assert restored.restored == [b]
    assert [(s.from_id, s.to_id, s.relation) for s in restored.skipped_links] == [(b, c, "supersedes")]
    assert "cycle" in restored.skipped_links[0].reason and "cycle" in restored.message
    refused = await client.call_tool("link_memories", {"from_id": b, "to_id": c, "relation": "supersedes"})
    assert refused.is_error
