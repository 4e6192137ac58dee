"""Recall through MCP finds git patterns by meaning and names them with 🔄 🔥 💡 sources."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from cognitive_memory.loaders import load_git
from cognitive_memory.system import CognitiveSystem
from tests.gitrepo import build_sample_history

pytestmark = pytest.mark.anyio


@pytest.mark.model
@pytest.mark.parametrize(
    ("query", "source"),
    [
        ("which files change together with the lexer?", "🔄 toolkit → src/lexer.py ↔ src/parser.py"),
        ("which file keeps needing bug fixes?", "🔥 toolkit → src/parser.py"),
        ("how was the unicode handling of the lexer fixed?", "💡 toolkit → fix with tests"),
    ],
)
async def test_recall_finds_git_patterns_with_their_sources(
    client: Client, real_system: CognitiveSystem, tmp_path: Path, query: str, source: str
) -> None:
    report = load_git(real_system.loaded, build_sample_history(tmp_path / "toolkit").path)
    assert report.memories.added == 5
    result = await client.call_tool("recall_memories", {"query": query, "types": ["core"], "detail": "full"})
    assert not result.is_error, result.content
    body = result.structured_content
    assert body is not None
    first = body["memories"]["core"][0]
    assert first["source_info"] == source
    assert first["metadata"]["loader_type"] == "git"
    text = result.content[0].text  # type: ignore[union-attr]  # first block is TextContent
    assert f"Source: {source}" in text


async def test_git_patterns_are_kept_when_asked_to_forget_them(
    client: Client, real_system: CognitiveSystem, tmp_path: Path
) -> None:
    repository = build_sample_history(tmp_path / "toolkit").path
    load_git(real_system.loaded, repository)
    recalled = await client.call_tool("recall_memories", {"query": "which file keeps needing bug fixes?"})
    assert recalled.structured_content is not None
    hotspot = recalled.structured_content["memories"]["core"][0]["id"]

    forgotten = await client.call_tool("forget_memories", {"memory_ids": [hotspot]})

    assert forgotten.structured_content is not None
    (kept,) = forgotten.structured_content["kept"]
    # The short id of the brief answer was resolved to the memory's whole id.
    assert kept["id"].startswith(hotspot) and forgotten.structured_content["forgotten"] == []
    assert kept["reason"].startswith(f"a pattern of {repository}'s history")
