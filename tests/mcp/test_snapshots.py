"""snapshot_memories through the SDK's in-memory client: a named snapshot made while the server
runs and listed, each with the shell command that restores it; names used once, calls at once
taking turns, the event loop free meanwhile, and a full disk said as such."""

from __future__ import annotations

import errno
import shlex
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from cognitive_memory.backup import snapshot as snapshot_module
from cognitive_memory.backup.snapshot import list_snapshots, verify_snapshot
from cognitive_memory.service import snapshots as snapshots_module
from tests.mcp.test_errors import error_body
from tests.mcp.tools import call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL


async def refused(client: Client, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool("snapshot_memories", arguments)
    assert result.is_error, result.structured_content
    return error_body(result)


@pytest.mark.stores(
    "sqlite", reason="a PostgreSQL store's snapshot is restored by move-store, not restore (docs/team.md)"
)
async def test_a_named_snapshot_is_made_listed_and_says_how_to_restore_it(
    client: Client, data_dir: Path
) -> None:
    for text in ("The deploy runs on Mondays.", "Staging is restored nightly."):
        await call(client, "store_memory", {"text": text})

    result = await client.call_tool("snapshot_memories", {"name": "before-refactor"})
    await call(client, "snapshot_memories", {})
    listed = await call(client, "snapshot_memories", {"list": True})

    assert not result.is_error and result.structured_content is not None
    made = result.structured_content["snapshot"]
    path = Path(made["path"])
    assert path.parent == data_dir / "backups" and path.name.endswith("-before-refactor")
    assert (made["name"], made["counts"]["memories"]) == ("before-refactor", 2)
    assert made["size_bytes"] > 0 and made["created_at"]
    expected = f"COGNITIVE_MEMORY_DATA_DIR={shlex.quote(str(data_dir))} memory_system restore {path} --force"
    assert made["restore"] == expected
    assert verify_snapshot(path).manifest.counts["memories"] == 2
    text = result.content[0].text  # type: ignore[union-attr]  # the text block
    assert text.startswith("✓ Snapshot 'before-refactor' made: 2 memories") and expected in text
    assert listed["total"] == 2
    assert [s.get("name") for s in listed["snapshots"]] == ["before-refactor", None]
    assert listed["snapshots"][0]["restore"] == expected


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"name": "../escape"}, "invalid_value"),
        ({"name": ".hidden"}, "invalid_value"),
        ({"name": "n" * 65}, "text_too_long"),
        ({"name": "kept", "list": True}, "invalid_value"),
        ({"list": "yes please"}, "invalid_type"),
        ({"restore": "kept"}, "unknown_field"),
    ],
)
async def test_wrong_arguments_are_refused_with_a_code(
    client: Client, arguments: dict[str, Any], code: str
) -> None:
    await call(client, "store_memory", {"text": "A memory to snapshot."})
    body = await refused(client, arguments)
    assert body["error"] == code, body["message"]


async def test_a_name_already_taken_is_refused_and_nothing_is_made(client: Client, data_dir: Path) -> None:
    await call(client, "store_memory", {"text": "The cache TTL is five minutes."})
    await call(client, "snapshot_memories", {"name": "weekly"})

    body = await refused(client, {"name": "weekly"})

    assert body["error"] == "name_taken"
    assert "'weekly' already exists" in body["message"] and "choose another name" in body["message"]
    assert len(list_snapshots(data_dir / "backups")) == 1


async def test_snapshots_asked_for_at_once_take_turns_and_a_name_is_given_once(
    client: Client, data_dir: Path
) -> None:
    await call(client, "store_memory", {"text": "Billing retries webhooks three times."})
    answers: list[Any] = []

    async def snapshot(arguments: dict[str, Any]) -> None:
        answers.append(await client.call_tool("snapshot_memories", arguments))

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            for arguments in ({"name": "same"}, {"name": "same"}, {}, {}, {"name": "other"}):
                group.start_soon(snapshot, arguments)

    made = [a.structured_content["snapshot"]["path"] for a in answers if not a.is_error]
    refusals = [error_body(a)["error"] for a in answers if a.is_error]
    assert refusals == ["name_taken"] and len(set(made)) == 4
    on_disk = list_snapshots(data_dir / "backups")
    assert sorted(str(s.path) for s in on_disk) == sorted(made)
    assert sorted(s.manifest.name or "" for s in on_disk) == ["", "", "other", "same"]
    for path in made:
        verify_snapshot(Path(path))


async def test_other_calls_are_answered_while_a_snapshot_is_made(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    await call(client, "store_memory", {"text": "Snapshots run in a worker thread."})
    answered = threading.Event()
    real = snapshots_module.create_snapshot

    def slow_snapshot(*args: Any, **kwargs: Any) -> Any:
        # Finishes only once another call was answered: a snapshot holding the event loop would
        # never see it, and the test would time out.
        assert answered.wait(timeout=30), "no other call was answered while the snapshot ran"
        return real(*args, **kwargs)

    monkeypatch.setattr(snapshots_module, "create_snapshot", slow_snapshot)
    results: list[Any] = []

    async def snapshot() -> None:
        results.append(await client.call_tool("snapshot_memories", {"name": "slow"}))

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(snapshot)
            status = await call(client, "memory_status", {})
            answered.set()

    assert status["success"] is True
    assert not results[0].is_error, results[0].content


async def test_a_full_disk_is_refused_as_disk_full_and_leaves_no_snapshot(
    client: Client, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await call(client, "store_memory", {"text": "The disk filled up during the backup."})

    def no_room(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(snapshot_module.os, "fsync", no_room)
    body = await refused(client, {"name": "full"})
    monkeypatch.undo()

    assert body["error"] == "disk_full"
    assert "is full" in body["message"] and "Free some space" in body["message"]
    assert list_snapshots(data_dir / "backups") == []
    assert [p.name for p in (data_dir / "backups").iterdir()] == [".snapshot.lock"]
    again = await call(client, "snapshot_memories", {"name": "full"})  # the name was not taken
    assert again["snapshot"]["name"] == "full"
