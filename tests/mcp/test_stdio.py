"""`memory_system serve mcp` as a real subprocess over stdio: memories survive a restart."""

from __future__ import annotations

import ctypes
import json
import mmap
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import anyio
import numpy as np
import pytest
from mcp import Client, StdioServerParameters

from cognitive_memory.index.edge_store import EdgeVectorStore
from cognitive_memory.index.vector_store import VectorPoint

pytestmark = pytest.mark.anyio

MEMORY_SYSTEM = Path(sys.executable).with_name("memory_system")


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}


def spawn_raw_server(data_dir: Path, stderr: int = subprocess.PIPE) -> subprocess.Popen[bytes]:
    """`serve mcp` on pipes, for tests that write raw bytes to it."""
    data_dir.mkdir(parents=True, exist_ok=True)
    parameters = server_parameters(data_dir)
    return subprocess.Popen(
        [parameters.command, *parameters.args],
        env=parameters.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
    )


def server_parameters(data_dir: Path) -> StdioServerParameters:
    """`serve mcp` in ``data_dir``; ``PYTHONPATH`` is kept so that a server started from a worktree
    runs that worktree's code, not the checkout the venv was installed from."""
    kept = {name: os.environ[name] for name in ("PYTHONPATH",) if name in os.environ}
    env = {
        "PATH": os.environ.get("PATH", ""),
        **kept,
        "HOME": os.environ.get("HOME", str(data_dir)),
        "COGNITIVE_MEMORY_DATA_DIR": str(data_dir),
    }
    return StdioServerParameters(
        command=str(MEMORY_SYSTEM), args=["serve", "mcp"], env=env, cwd=str(data_dir)
    )


@pytest.mark.subprocess
async def test_the_server_opens_the_vector_index_once_its_first_answer_is_out(data_dir: Path) -> None:
    """A large store's shard takes a while to load; the server loads it in the background once it
    has answered the handshake, so the first recall finds it open (it used to load it then)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    owner_socket = data_dir / "vectors.sock"  # made by the process that opens the shard
    with anyio.fail_after(120):
        async with Client(server_parameters(data_dir)) as client:
            await client.list_tools()
            with anyio.fail_after(20):  # the words' upgrade, which opens it too, waits 30 s
                while not owner_socket.exists():
                    await anyio.sleep(0.05)
            recalled = await client.call_tool("recall_memories", {"query": "anything at all"})
            assert not recalled.is_error, recalled.content


def _resident_bytes(directory: Path) -> int:
    """How many bytes of the files under ``directory`` are in the page cache (Linux mincore)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    size_t, c_int = ctypes.c_size_t, ctypes.c_int
    libc.mmap.argtypes = [ctypes.c_void_p, size_t, c_int, c_int, c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    page = os.sysconf("SC_PAGE_SIZE")
    resident = 0
    for path in directory.rglob("*"):
        size = path.stat().st_size if path.is_file() else 0
        if not size:
            continue
        descriptor = os.open(path, os.O_RDONLY)
        try:
            address = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, descriptor, 0)
            pages = ctypes.create_string_buffer((size + page - 1) // page)
            assert libc.mincore(address, size, pages) == 0
            libc.munmap(address, size)
        finally:
            os.close(descriptor)
        resident += sum(flag & 1 for flag in pages.raw) * page
    return resident


@pytest.fixture
def disk_dir() -> Iterator[Path]:
    """A data directory on disk: the tests' own temporary directory may be in memory (tmpfs)."""
    directory = Path(tempfile.mkdtemp(prefix="cm-test-", dir="/var/tmp"))
    try:
        yield directory / "data"
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.subprocess
def test_a_server_that_ends_leaves_its_shard_in_the_page_cache(disk_dir: Path) -> None:
    """Edge evicts a shard's files from the page cache when the shard is dropped: the next start
    read them from disk again (1.0 s instead of 0.3 s to load 1,000,000 vectors). A server ending
    flushes its shard and leaves it to the kernel instead."""
    raw = np.random.default_rng(4).normal(size=(3_000, 384)).astype(np.float32)
    raw /= np.linalg.norm(raw, axis=1, keepdims=True)
    edge = EdgeVectorStore(disk_dir / "vectors", 384)
    edge.upsert([VectorPoint(str(uuid.uuid4()), row, {}) for row in raw])
    assert edge.build_index(1)  # an optimised segment, the kind Edge warms at load and evicts at drop
    edge.close()
    segments = disk_dir / "vectors" / "segments"
    dropped = _resident_bytes(segments)
    process = _initialized(disk_dir)
    assert process.stdin is not None and process.stdout is not None
    recall = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    recall["params"] = {"name": "recall_memories", "arguments": {"query": "anything"}}
    for message in ({"jsonrpc": "2.0", "method": "notifications/initialized"}, recall):
        process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()
    assert json.loads(process.stdout.readline())["result"]["isError"] is False
    serving = _resident_bytes(segments)
    process.communicate(timeout=60)  # closes stdin: the server ends
    if dropped > serving / 4:
        pytest.skip(f"{disk_dir} keeps its files in memory (tmpfs?): nothing is evicted there")

    assert process.returncode == 0
    assert serving > 16 * 2**20  # the loaded shard's vectors, graph and indexes
    assert _resident_bytes(segments) > 0.9 * serving


@pytest.mark.subprocess
async def test_a_memory_stored_by_one_server_process_is_recalled_by_the_next(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    text = "The release checklist lives in docs/RELEASING.md and needs a signed tag."
    with anyio.fail_after(120):
        async with Client(server_parameters(data_dir)) as first:
            stored = await first.call_tool("store_memory", {"text": text, "context": {"tags": ["release"]}})
            assert not stored.is_error
            assert stored.structured_content is not None
            memory_id = stored.structured_content["memory_id"]
            refused = await first.call_tool("recall_memories", {"query": "x", "max_results": -3})
            assert refused.is_error
        async with Client(server_parameters(data_dir)) as second:
            recalled = await second.call_tool(
                "recall_memories", {"query": "where is the release checklist?", "detail": "full"}
            )
            assert not recalled.is_error
            assert recalled.structured_content is not None
            core = recalled.structured_content["memories"]["core"]
            assert core[0]["id"] == memory_id
            assert core[0]["content"] == text
            status = await second.call_tool("memory_status", {})
            assert status.structured_content is not None
            assert status.structured_content["memory_counts"]["total_memories"] == 1
            assert status.structured_content["storage_stats"]["vector_count"] == 1


@pytest.mark.subprocess
async def test_a_server_whose_vector_store_is_held_elsewhere_still_answers_and_loses_nothing(
    data_dir: Path,
) -> None:
    """The server opens the vector store at its first use, not before its handshake; a store it
    cannot open (held by a process that does not serve it) makes stores queue and recall fall back
    to words."""
    from cognitive_memory.index import EdgeVectorStore

    data_dir.mkdir(parents=True, exist_ok=True)
    holder = EdgeVectorStore(data_dir / "vectors")
    try:
        with anyio.fail_after(120):
            async with Client(server_parameters(data_dir)) as client:
                stored = await client.call_tool("store_memory", {"text": "The VPN gateway lives in rack 12."})
                recalled = await client.call_tool(
                    "recall_memories", {"query": "where is the VPN gateway?", "detail": "full"}
                )
                status = await client.call_tool("memory_status", {})
    finally:
        holder.close()

    assert stored.structured_content is not None and stored.structured_content["queued"] is True
    assert recalled.structured_content is not None and recalled.structured_content["degraded"] is True
    core = recalled.structured_content["memories"]["core"]
    assert [memory["id"] for memory in core] == [stored.structured_content["memory_id"]]
    assert status.structured_content is not None
    assert status.structured_content["system_status"] == "degraded"
    assert "held by another process" in json.dumps(status.structured_content)


def _initialized(data_dir: Path) -> subprocess.Popen[bytes]:
    process = spawn_raw_server(data_dir)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    process.stdin.flush()
    answer = json.loads(process.stdout.readline())
    assert answer["result"]["serverInfo"] == {
        "name": "cognitive-memory",
        "version": metadata.version("cognitive-memory"),
    }
    return process


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("when", ["after initialize", "0.3 s after start"])
@pytest.mark.subprocess
def test_a_signal_ends_a_stdio_server_with_stdin_still_open(data_dir: Path, signum: int, when: str) -> None:
    if when == "after initialize":
        process = _initialized(data_dir)
    else:
        process = spawn_raw_server(data_dir)
        time.sleep(0.3)
    started = time.monotonic()
    process.send_signal(signum)
    returncode = process.wait(timeout=10)  # stdin stays open: only the signal can end it
    elapsed = time.monotonic() - started
    _, stderr = process.communicate()

    assert returncode == 0
    assert elapsed < 5
    assert b"Traceback" not in stderr
    assert b"terminate called" not in stderr


@pytest.mark.subprocess
def test_make_serve_writes_nothing_but_json_rpc_on_stdout(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    repository = Path(__file__).resolve().parents[2]
    env = {**server_parameters(data_dir).env, "VENV": str(Path(sys.executable).parents[1])}  # type: ignore[dict-item]  # env is set above
    process = subprocess.Popen(
        ["make", "--no-print-directory", "-C", str(repository), "serve", f"VENV={env['VENV']}"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    process.stdin.flush()
    first = process.stdout.readline()
    process.communicate(timeout=30)

    assert json.loads(first)["id"] == INITIALIZE["id"]


@pytest.mark.subprocess
async def test_a_qdrant_server_that_is_down_leaves_a_server_that_queues_and_recalls_by_words(
    data_dir: Path,
) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    parameters = server_parameters(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    parameters.env = {**(parameters.env or {}), "QDRANT_URL": f"http://127.0.0.1:{port}"}
    with anyio.fail_after(120):
        async with Client(parameters) as client:
            stored = await client.call_tool("store_memory", {"text": "The VPN gateway lives in rack 12."})
            recalled = await client.call_tool(
                "recall_memories", {"query": "where is the VPN gateway?", "detail": "full"}
            )
            status = await client.call_tool("memory_status", {})

    assert stored.structured_content is not None and stored.structured_content["queued"] is True
    assert recalled.structured_content is not None and recalled.structured_content["degraded"] is True
    core = recalled.structured_content["memories"]["core"]
    assert [memory["id"] for memory in core] == [stored.structured_content["memory_id"]]
    assert status.structured_content is not None
    assert status.structured_content["system_status"] == "degraded"
    assert status.structured_content["storage_stats"]["pending_vector_writes"] == 1


@pytest.mark.subprocess
def test_requests_written_before_stdin_closes_are_all_answered(data_dir: Path) -> None:
    """`printf ... | memory_system serve mcp`: the SDK cancels what still runs when its input ends,
    so only the handshake was answered."""
    requests = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "memory_status", "arguments": {}},
        },
        {"jsonrpc": "2.0", "id": "three", "method": "ping"},
    ]
    process = spawn_raw_server(data_dir)

    out, _ = process.communicate(b"".join(json.dumps(r).encode() + b"\n" for r in requests), timeout=120)

    answers = {answer["id"]: answer for answer in map(json.loads, out.splitlines())}
    assert sorted(answers, key=str) == [0, 1, 2, "three"] and process.returncode == 0
    assert all("result" in answer for answer in answers.values())
    assert answers[2]["result"]["isError"] is False


@pytest.mark.subprocess
def test_a_line_that_is_not_json_rpc_is_answered_and_the_session_goes_on(data_dir: Path) -> None:
    process = spawn_raw_server(data_dir)
    assert process.stdin is not None and process.stdout is not None
    for line in (b"this is not json", b'{"jsonrpc": "2.0", "id": 5}', json.dumps(INITIALIZE).encode()):
        process.stdin.write(line + b"\n")
    process.stdin.flush()
    answers = [json.loads(process.stdout.readline()) for _ in range(3)]
    process.communicate(timeout=30)  # closes stdin: the server ends

    assert [(a["id"], a.get("error", {}).get("code")) for a in answers] == [
        (None, -32700),
        (None, -32600),
        (INITIALIZE["id"], None),
    ]


@pytest.mark.model
@pytest.mark.subprocess
async def test_a_server_starts_and_answers_over_a_row_no_command_writes(data_dir: Path) -> None:
    """Issue #27: with a memory whose id is not a UUID in the store, `serve mcp` died before it
    answered `initialize`."""
    from typer.testing import CliRunner

    from cognitive_memory.storage import SQLiteMemoryStore
    from memory_system.cli import app
    from tests.damaging import write_bad_row

    fact = "The on-call rota is in the ops wiki under Rotas/2026."
    assert CliRunner().invoke(app, ["store", fact]).exit_code == 0
    database = data_dir / "cognitive_memory.db"
    memories = SQLiteMemoryStore(database)
    try:
        (like,) = next(memories.memories.batches())
    finally:
        memories.close()
    write_bad_row(database, like, "id not a UUID")

    with anyio.fail_after(120):
        async with Client(server_parameters(data_dir)) as client:
            recalled = await client.call_tool("recall_memories", {"query": "where is the on-call rota?"})
            stored = await client.call_tool("store_memory", {"text": "Deploys freeze on Fridays after 3pm."})
            status = await client.call_tool("memory_status", {})

    assert recalled.structured_content is not None and not recalled.is_error
    assert recalled.structured_content["memories"]["core"][0]["content"] == fact
    assert stored.structured_content is not None and stored.structured_content["queued"] is False
    assert status.structured_content is not None
    assert status.structured_content["memory_counts"]["total_memories"] == 3
    assert status.structured_content["storage_stats"]["vector_count"] == 2


@pytest.mark.subprocess
@pytest.mark.parametrize("configured", [True, False], ids=["logging-configured", "root-bare"])
def test_the_sdks_rich_logging_is_imported_only_where_it_is_used(data_dir: Path, configured: bool) -> None:
    # `serve mcp` configures its logging before it builds the server: the SDK's rich handler,
    # dropped there by logging.basicConfig, was a large part of the imports before the handshake.
    probe = (
        "import logging, sys\n"
        f"{'logging.basicConfig()' if configured else ''}\n"
        "from cognitive_memory.main import build_system\n"
        "from cognitive_memory.settings import Settings\n"
        "from interfaces.mcp_server import create_server\n"
        "system = build_system(Settings(env_file=None), 'test')\n"
        "create_server(system)\n"
        "system.close()\n"
        "print('rich.logging' in sys.modules, len(logging.getLogger().handlers))\n"
    )
    env = {**os.environ, "COGNITIVE_MEMORY_DATA_DIR": str(data_dir)}  # the fixture's, for the probe
    output = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    assert output.stdout.split() == (["False", "1"] if configured else ["True", "1"])
