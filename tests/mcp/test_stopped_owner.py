"""The process owning the embedded vector store is stopped (Ctrl-Z, SIGSTOP): the others still answer."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.mcp.test_stdio import MEMORY_SYSTEM, server_parameters

pytestmark = pytest.mark.anyio


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


@pytest.mark.subprocess
async def test_a_store_answers_within_10_s_while_the_owner_is_stopped(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    with anyio.fail_after(240):
        async with contextlib.AsyncExitStack() as stack:
            owner = await stack.enter_async_context(Client(server_parameters(data_dir)))
            other = await stack.enter_async_context(Client(server_parameters(data_dir)))
            await stopped_owner_scenario(owner, other, data_dir)


async def stopped_owner_scenario(owner: Client, other: Client, data_dir: Path) -> None:
    await call(owner, "store_memory", {"text": "The owner opened the vector store first."})
    await call(other, "store_memory", {"text": "The second server reaches the owner's store."})
    details = (await call(other, "memory_status", {"detailed": True}))["configuration"]
    owner_pid = int(details["vector_store_details"]["served_by_pid"])
    assert owner_pid != details["process_id"]
    os.kill(owner_pid, signal.SIGSTOP)
    try:
        with anyio.fail_after(10):
            stored = await call(other, "store_memory", {"text": "Stored while the owner is stopped."})
        assert stored["success"] and stored["queued"]
        with anyio.fail_after(10):
            status = await call(other, "memory_status", {})
        assert status["system_status"] == "degraded"
        assert "did not answer" in status["storage_stats"]["qdrant_status"]
        assert status["memory_counts"]["total_memories"] == 3
        with anyio.fail_after(10):
            recalled = await call(
                other, "recall_memories", {"query": "stored while the owner is stopped", "detail": "full"}
            )
        assert recalled["degraded"]
        assert recalled["memories"]["core"][0]["id"] == stored["memory_id"]
        with anyio.fail_after(60):  # a new process: its start and the model's load, then the store
            command = await anyio.run_process(
                [str(MEMORY_SYSTEM), "store", "A command stored this while the owner was stopped."],
                env=server_parameters(data_dir).env,
                check=False,
            )
        assert command.returncode == 0, command.stderr.decode()
        assert "will be indexed automatically" in command.stdout.decode()
        with anyio.fail_after(60):
            shell_status = await anyio.run_process(
                [str(MEMORY_SYSTEM), "status"], env=server_parameters(data_dir).env, check=False
            )
        assert "did not answer" in shell_status.stdout.decode(), shell_status.stderr.decode()
    finally:
        os.kill(owner_pid, signal.SIGCONT)
