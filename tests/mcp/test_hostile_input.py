"""Hostile input: arbitrary tool arguments (property-based), injection strings, raw stdio garbage."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.types import TextContent

from cognitive_memory.encoding import HashEncoder
from cognitive_memory.main import build_system
from cognitive_memory.service import SHORT_ID_CHARS
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem
from interfaces.mcp_server import MemoryServer, create_server
from tests.mcp.test_malformed_messages import StdioSession
from tests.mcp.test_stdio import spawn_raw_server

KNOWN_CODES = {
    "missing_field",
    "invalid_type",
    "empty_text",
    "text_too_long",
    "out_of_range",
    "invalid_value",
    "unknown_field",
    "too_many_fields",
    "too_many_items",
    "too_many_tags",
    "invalid_text",
    "invalid_metadata",
    "unknown_tool",
    "invalid_cursor",
    "not_found",
}
INJECTIONS = ["'; DROP TABLE memories; --", '" OR 1=1 --', "NEAR(a b)", "*", "memory_fts MATCH 'x'", "\x00"]
FIELDS = {
    "store_memory": ["text", "context"],
    "recall_memories": ["query", "types", "max_results", "detail", "include_bridges", "filters"],
    "session_lessons": ["lesson_content", "lesson_type", "session_context", "importance"],
    "memory_status": ["detailed"],
    "forget_memories": ["memory_ids"],
    "get_memories": ["memory_ids", "include_history"],
    "list_memories": ["filters", "order_by", "limit", "cursor", "project"],
    "link_memories": ["from_id", "to_id", "relation", "note"],
    "unlink_memories": ["from_id", "to_id", "relation"],
    "related_memories": ["memory_id", "depth", "relations"],
}

texts = st.one_of(st.text(max_size=40), st.sampled_from(INJECTIONS), st.just(" "), st.just("x" * 100_001))
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**12), 10**12), st.floats(allow_nan=False), texts
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(texts, inner, max_size=4)),
    max_leaves=8,
)


@st.composite
def tool_calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    tool = draw(st.sampled_from([*FIELDS, "no_such_tool"]))
    names = FIELDS.get(tool, []) + ["context", "unexpected"]
    chosen = draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
    return tool, {name: draw(values) for name in chosen}


@pytest.fixture(scope="module")
def hostile_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[MemoryServer, CognitiveSystem]]:
    settings_ = Settings(env_file=None)
    settings_.storage.data_dir = tmp_path_factory.mktemp("hostile")
    system = build_system(settings_, "test", encoder=HashEncoder())
    yield create_server(system), system
    system.close()


def body_of(result: Any) -> dict[str, Any]:
    block = result.content[0]
    assert isinstance(block, TextContent)
    parsed: dict[str, Any] = json.loads(block.text)
    return parsed


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(call=tool_calls())
@pytest.mark.slow
def test_any_arguments_get_an_answer_or_a_known_error_and_nothing_half_written(
    hostile_server: tuple[MemoryServer, CognitiveSystem], call: tuple[str, dict[str, Any]]
) -> None:
    server, system = hostile_server
    tool, arguments = call
    before = system.records.memories.counts().total

    async def run() -> Any:
        async with Client(server) as client:
            return await client.call_tool(tool, arguments)

    result = anyio.run(run)
    system.flush()
    after = system.records.memories.counts().total
    if result.is_error:
        body = body_of(result)
        assert body["success"] is False
        assert body["error"] in KNOWN_CODES, body
        assert after == before
    else:
        assert result.structured_content is not None and result.structured_content["success"] is True
        stored = tool in ("store_memory", "session_lessons")
        assert after == before + (1 if stored else 0)
    assert system.vectors.count() == after


@pytest.mark.anyio
async def test_injection_strings_are_data_in_tags_and_queries(data_dir: Path) -> None:
    system = build_system(Settings(env_file=None), "test", encoder=HashEncoder())
    try:
        await _store_and_recall_injections(create_server(system), system)
    finally:
        system.close()


async def _store_and_recall_injections(server: MemoryServer, system: CognitiveSystem) -> None:
    async with Client(server) as client:
        stored = await client.call_tool(
            "store_memory",
            {
                "text": "Quarterly report: DROP TABLE memories is a bad idea",
                "context": {"tags": INJECTIONS[:5]},
            },
        )
        assert not stored.is_error
        assert stored.structured_content is not None
        for query in INJECTIONS[:5]:
            recalled = await client.call_tool("recall_memories", {"query": query})
            assert not recalled.is_error
        found = await client.call_tool("recall_memories", {"query": "DROP TABLE memories"})
    assert found.structured_content is not None
    first = found.structured_content["memories"]["core"][0]
    assert first["id"] == stored.structured_content["memory_id"][:SHORT_ID_CHARS]
    assert first["tags"] == INJECTIONS[:5]
    assert system.records.memories.counts().total == 1


@pytest.mark.subprocess
def test_raw_stdio_garbage_is_survived_and_the_next_request_answered(data_dir: Path) -> None:
    process = spawn_raw_server(data_dir)
    assert process.stdin is not None and process.stdout is not None

    def send(raw: bytes) -> None:
        assert process.stdin is not None
        process.stdin.write(raw + b"\n")
        process.stdin.flush()

    replies = StdioSession(process)  # reads whole lines itself: select() misses buffered ones

    def answer(request_id: int) -> dict[str, Any]:
        return replies.answer(request_id, within=120)

    def call(request_id: int, tool: str, arguments: Any) -> dict[str, Any]:
        params = {"name": tool, "arguments": arguments}
        send(
            json.dumps(
                {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
            ).encode()
        )
        return answer(request_id)

    try:
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        }
        send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}).encode())
        assert "result" in answer(1)
        send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        for garbage in (b"{not json", b"\xff\xfe\xfd not utf-8", b"[" * 10_000, b"y" * (2 * 1024 * 1024)):
            send(garbage)
        assert "error" in call(2, "store_memory", "not an object")  # a malformed request: protocol error
        stored = call(3, "store_memory", {"text": "survived the garbage \x00 with a NUL byte"})
        assert stored["result"]["isError"] is False
        too_long = call(4, "store_memory", {"text": "x" * (10 * 1024 * 1024)})  # over a message's 4 MiB
        assert too_long["error"]["code"] == -32600
        assert "over 4,194,304 characters" in too_long["error"]["message"]
        recalled = call(5, "recall_memories", {"query": "survived the garbage"})
        core = recalled["result"]["structuredContent"]["memories"]["core"]
        assert core[0]["content"] == "survived the garbage \x00 with a NUL byte"
    finally:
        _, stderr = process.communicate(timeout=60)  # closes stdin: the server ends its session
    assert process.returncode == 0
    assert b"Traceback" not in stderr
