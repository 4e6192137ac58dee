"""Load and crashes: many clients at once lose nothing; kill -9 at any moment loses nothing acknowledged."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.mcp.test_http import free_port, spawn_http_server
from tests.mcp.test_stdio import INITIALIZE, server_parameters, spawn_raw_server

pytestmark = pytest.mark.anyio


def stored_ids(data_dir: Path) -> set[str]:
    with sqlite3.connect(data_dir / "cognitive_memory.db") as conn:
        return {row[0] for row in conn.execute("SELECT id FROM memories")}


async def final_status(data_dir: Path) -> dict[str, Any]:
    async with Client(server_parameters(data_dir)) as client:
        result = await client.call_tool("memory_status", {})
    assert result.structured_content is not None
    return result.structured_content


@pytest.mark.subprocess
async def test_eight_http_clients_times_a_hundred_mixed_calls(data_dir: Path) -> None:
    port = free_port()
    process = spawn_http_server(data_dir, port, MCP_HTTP_AUTH="off")  # the clients send no token
    acknowledged: list[str] = []
    failures: list[str] = []
    try:

        async def worker(number: int) -> None:
            rng = random.Random(number)
            async with (
                httpx2.AsyncClient(timeout=120) as http,
                Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client,
            ):
                for call in range(100):
                    roll = rng.random()
                    if roll < 0.4:
                        region = rng.randint(1, 9)
                        text = f"client {number} call {call}: the cache for region {region} was warmed"
                        result = await client.call_tool("store_memory", {"text": text})
                    elif roll < 0.9:
                        result = await client.call_tool(
                            "recall_memories", {"query": f"cache region {call % 9}"}
                        )
                    else:
                        result = await client.call_tool("memory_status", {})
                    if result.is_error:
                        failures.append(str(result.content))
                    elif roll < 0.4:
                        assert result.structured_content is not None
                        acknowledged.append(result.structured_content["memory_id"])

        with anyio.fail_after(600):
            async with anyio.create_task_group() as group:
                for number in range(8):
                    group.start_soon(worker, number)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    assert failures == []
    assert len(acknowledged) > 250
    assert stored_ids(data_dir) == set(acknowledged)
    status = await final_status(data_dir)
    assert status["memory_counts"]["total_memories"] == len(acknowledged)
    assert status["storage_stats"]["vector_count"] == len(acknowledged)


@pytest.mark.subprocess
async def test_three_stdio_servers_storing_at_once_lose_nothing(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    acknowledged: list[str] = []

    async def server(number: int) -> None:
        async with Client(server_parameters(data_dir)) as client:

            async def one(index: int) -> None:
                text = f"process {number} store {index}: deploy window moved to {index}:00"
                result = await client.call_tool("store_memory", {"text": text})
                assert not result.is_error, result.content
                assert result.structured_content is not None
                acknowledged.append(result.structured_content["memory_id"])

            async with anyio.create_task_group() as group:
                for index in range(20):
                    group.start_soon(one, index)

    with anyio.fail_after(300):
        async with anyio.create_task_group() as group:
            for number in range(3):
                group.start_soon(server, number)
    assert len(acknowledged) == 60
    assert stored_ids(data_dir) == set(acknowledged)
    status = await final_status(data_dir)
    assert status["memory_counts"]["total_memories"] == 60
    assert status["storage_stats"]["vector_count"] == 60
    assert status["system_status"] == "healthy"


@pytest.mark.subprocess
def test_kill_9_at_random_moments_loses_no_acknowledged_memory(data_dir: Path) -> None:
    rng = random.Random(9)
    acknowledged: set[str] = set()
    for round_number in range(3):
        process = spawn_raw_server(data_dir, stderr=subprocess.DEVNULL)
        assert process.stdin is not None and process.stdout is not None
        requests: list[dict[str, Any]] = [INITIALIZE]
        for index in range(1, 40):
            text = f"round {round_number} memory {index} about the flaky integration suite"
            params = {"name": "store_memory", "arguments": {"text": text}}
            requests.append({"jsonrpc": "2.0", "id": index, "method": "tools/call", "params": params})
        process.stdin.write(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
        process.stdin.flush()
        kill_after = rng.randint(3, 30)  # answers to wait for before the kill
        answers = 0
        while answers < kill_after:
            message = json.loads(process.stdout.readline())
            if message.get("id", 0) > 0:
                answers += 1
                acknowledged.add(message["result"]["structuredContent"]["memory_id"])
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        process.stdin.close()
        process.stdout.close()
    assert acknowledged <= stored_ids(data_dir)  # memories lost: 0

    status = anyio.run(final_status, data_dir)  # a new process replays the outbox first
    total = status["memory_counts"]["total_memories"]
    assert total == len(stored_ids(data_dir)) >= len(acknowledged)
    assert status["storage_stats"]["vector_count"] == total
    assert status["storage_stats"]["pending_vector_writes"] == 0
