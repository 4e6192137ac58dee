"""Two `serve mcp` processes on one data directory: both serve, and a kill -9 of the owner loses nothing."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.mcp.test_stdio import server_parameters

pytestmark = pytest.mark.anyio


async def store(client: Client, text: str) -> str:
    result = await client.call_tool("store_memory", {"text": text})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return str(result.structured_content["memory_id"])


async def status(client: Client) -> dict[str, Any]:
    result = await client.call_tool("memory_status", {"detailed": True})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


@pytest.mark.subprocess
async def test_two_servers_share_one_memory_and_survive_the_owner_being_killed(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    stored: list[str] = []
    with anyio.fail_after(240):
        stacks = [contextlib.AsyncExitStack(), contextlib.AsyncExitStack()]
        try:
            clients = [
                await stack.enter_async_context(Client(server_parameters(data_dir))) for stack in stacks
            ]

            async def fill(name: int, client: Client) -> None:
                for index in range(5):
                    memory_id = await store(client, f"server {name} memory {index} about cache invalidation")
                    stored.append(memory_id)

            async with anyio.create_task_group() as group:
                for name, client in enumerate(clients):
                    group.start_soon(fill, name, client)

            reports = [await status(client) for client in clients]
            owner_pid = reports[0]["configuration"]["vector_store_details"]["served_by_pid"]
            assert reports[1]["configuration"]["vector_store_details"]["served_by_pid"] == owner_pid
            pids = [report["configuration"]["process_id"] for report in reports]
            assert owner_pid in pids and pids[0] != pids[1]
            for report in reports:
                assert report["memory_counts"]["total_memories"] == 10
                assert report["storage_stats"]["vector_count"] == 10

            owner = pids.index(owner_pid)
            survivor = clients[1 - owner]
            os.kill(owner_pid, signal.SIGKILL)

            stored.append(await store(survivor, "stored after the owner was killed"))  # one retried call
            final = await status(survivor)
            assert (
                final["configuration"]["vector_store_details"]["served_by_pid"]
                == final["configuration"]["process_id"]
            )
            assert final["memory_counts"]["total_memories"] == 11
            assert final["storage_stats"]["vector_count"] == 11
            assert final["storage_stats"]["pending_vector_writes"] == 0
            recalled = await survivor.call_tool(
                "recall_memories", {"query": "cache invalidation", "max_results": 20, "detail": "full"}
            )
            assert recalled.structured_content is not None
            lists = recalled.structured_content["memories"]
            found = {memory["id"] for memory in lists["core"] + lists["peripheral"]}
            assert set(stored[:10]) <= found
        finally:
            for stack in reversed(stacks):
                with contextlib.suppress(Exception):  # the killed process's session ends abruptly
                    await stack.aclose()
