"""The data directory is deleted under a running server: it stops acknowledging stores (issue #15)."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.mcp.test_errors import error_body as error_of
from tests.mcp.test_stdio import server_parameters

pytestmark = pytest.mark.anyio


@pytest.mark.subprocess
async def test_a_server_whose_data_directory_was_deleted_refuses_stores_and_is_not_healthy(
    data_dir: Path,
) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    with anyio.fail_after(120):
        async with Client(server_parameters(data_dir)) as client:
            before = await client.call_tool("store_memory", {"text": "Stored before the directory went."})
            assert not before.is_error
            healthy = await client.call_tool("memory_status", {})
            assert healthy.structured_content is not None
            assert healthy.structured_content["system_status"] == "healthy"

            shutil.rmtree(data_dir)

            stored = await client.call_tool("store_memory", {"text": "Stored after the directory went."})
            assert stored.is_error
            error = error_of(stored)
            assert error["error"] == "data_dir_gone"
            assert f"its directory {data_dir.resolve()} was deleted" in error["message"]
            status = await client.call_tool("memory_status", {})
            assert status.is_error
            assert error_of(status)["error"] == "data_dir_gone"
            lesson = await client.call_tool(
                "session_lessons", {"lesson_content": "Deleted dirs lose writes."}
            )
            assert lesson.is_error
    assert not data_dir.exists()  # nothing was written to a new directory either


@pytest.mark.subprocess
async def test_a_database_file_replaced_under_the_server_is_found_out(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    with anyio.fail_after(120):
        async with Client(server_parameters(data_dir)) as client:
            assert not (await client.call_tool("store_memory", {"text": "The first database."})).is_error
            database = data_dir / "cognitive_memory.db"
            database.rename(data_dir / "moved.db")
            shutil.copyfile(data_dir / "moved.db", database)

            stored = await client.call_tool("store_memory", {"text": "Into which database?"})
            assert stored.is_error
            assert "was replaced by another file" in error_of(stored)["message"]
