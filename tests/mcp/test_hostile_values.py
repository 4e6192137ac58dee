"""Values that look fine to a lax parser but are not what the schema says: invisible text, a level
given as a string, a count given as a boolean. Each is refused with a clear error; nothing is stored."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client
from mcp.types import TextContent

from cognitive_memory.core.validation import check_tags, is_blank
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem
from interfaces.mcp_server import MemoryServer, create_server

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL


@pytest.fixture
def system(data_dir: Any) -> Any:
    built = build_system(Settings(env_file=None), "test", encoder=HashEncoder())
    yield built
    built.close()


@pytest.fixture
def server(system: CognitiveSystem) -> MemoryServer:
    return create_server(system, max_results=50)


def _error(result: Any) -> dict[str, Any]:
    assert result.is_error
    block = result.content[0]
    assert isinstance(block, TextContent)
    body: dict[str, Any] = json.loads(block.text)
    return body


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("\u200b\u200b\u200b", id="zero-width-spaces"),
        pytest.param("\x00", id="nul"),
        pytest.param("\x00\x00 \x00", id="nuls-and-a-space"),
        pytest.param("\u200b\u200c\u200d\u2060\ufeff", id="zero-width-mix"),
    ],
)
async def test_text_with_no_visible_character_is_refused(
    server: MemoryServer, system: CognitiveSystem, text: str
) -> None:
    async with Client(server) as client:
        stored = await client.call_tool("store_memory", {"text": text})
        lesson = await client.call_tool("session_lessons", {"lesson_content": text})
        recalled = await client.call_tool("recall_memories", {"query": text})

    for result in (stored, lesson, recalled):
        body = _error(result)
        assert body["error"] == "empty_text"
        assert "no visible characters" in body["message"]
    assert system.records.memories.counts().total == 0


async def test_text_with_a_visible_character_among_invisible_ones_is_stored(
    server: MemoryServer, system: CognitiveSystem
) -> None:
    async with Client(server) as client:
        stored = await client.call_tool("store_memory", {"text": "\u200bok\x00"})

    assert not stored.is_error
    assert system.records.memories.counts().total == 1


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        pytest.param(
            "store_memory",
            {"text": "x", "context": {"hierarchy_level": "1"}},
            "hierarchy_level",
            id="level-str",
        ),
        pytest.param(
            "store_memory",
            {"text": "x", "context": {"hierarchy_level": True}},
            "hierarchy_level",
            id="level-bool",
        ),
        pytest.param(
            "store_memory",
            {"text": "x", "context": {"importance_score": "0.5"}},
            "importance_score",
            id="importance-str",
        ),
        pytest.param(
            "recall_memories", {"query": "x", "max_results": True}, "max_results", id="max-results-bool"
        ),
        pytest.param(
            "recall_memories", {"query": "x", "max_results": "5"}, "max_results", id="max-results-str"
        ),
        pytest.param(
            "recall_memories",
            {"query": "x", "filters": {"hierarchy_levels": [True]}},
            "hierarchy_levels",
            id="filter-level-bool",
        ),
        pytest.param("list_memories", {"limit": True}, "limit", id="limit-bool"),
    ],
)
async def test_a_string_or_boolean_where_a_number_belongs_is_refused(
    server: MemoryServer, system: CognitiveSystem, tool: str, arguments: dict[str, Any], field: str
) -> None:
    async with Client(server) as client:
        result = await client.call_tool(tool, arguments)

    body = _error(result)
    assert body["error"] == "invalid_type"
    assert field in body["message"] and "should be a number" in body["message"]
    assert system.records.memories.counts().total == 0


async def test_numbers_are_still_accepted_where_the_schema_says_integer(
    server: MemoryServer, system: CognitiveSystem
) -> None:
    async with Client(server) as client:
        stored = await client.call_tool("store_memory", {"text": "x", "context": {"hierarchy_level": 1}})
        recalled = await client.call_tool("recall_memories", {"query": "x", "max_results": 5.0})

    assert not stored.is_error and not recalled.is_error
    assert stored.structured_content is not None and stored.structured_content["hierarchy_level"] == 1


def test_blankness_and_tags() -> None:
    assert is_blank("\u200b \x00\ufe0f\u3164")
    assert not is_blank("\u200ba")
    assert not is_blank("🙂")
    assert check_tags(["\u200b", "deploy", "\x00"]) == ("deploy",)
