"""Loaded markdown is recalled through MCP by meaning, with 📄 file → section sources."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from cognitive_memory.service import MemoryService
from cognitive_memory.system import CognitiveSystem

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL

DOCS = {
    "runbook.md": """# Incident runbook

What to do when production breaks, in order. Keep calm and write everything down.

## Database failover

When the primary Postgres node stops answering, promote the replica with `pg_ctl promote` and
point the connection pooler at it. Expect about thirty seconds of failed writes.

## Certificate expiry

TLS certificates renew automatically every sixty days. If a browser warns about an expired
certificate, run the renewal job by hand and reload nginx.
""",
    "team/onboarding.md": """# Onboarding

New engineers get a laptop, a buddy and access to the staging cluster on their first day.
See the [runbook](../runbook.md) before your first on-call week.
""",
}


@pytest.mark.model
async def test_recall_finds_loaded_sections_by_meaning_with_their_sources(
    client: Client, real_system: CognitiveSystem, tmp_path: Path
) -> None:
    for name, text in DOCS.items():
        (tmp_path / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / name).write_text(text)
    loaded = MemoryService(real_system).load_markdown(str(tmp_path / "docs"))
    assert loaded.chunks.added == 4

    result = await client.call_tool(
        "recall_memories",
        {"query": "the primary Postgres database node stops answering", "max_results": 3, "detail": "full"},
    )
    assert not result.is_error
    body = result.structured_content
    assert body is not None
    top = body["memories"]["core"][0]
    assert top["source_info"] == "📄 runbook.md → Database failover"
    assert "pg_ctl promote" in top["content"]
    assert top["hierarchy_level"] == 1 and top["memory_type"] == "semantic"
    text = result.content[0].text  # type: ignore[union-attr]  # first block is TextContent
    assert "Source: 📄 runbook.md → Database failover" in text

    welcome = await client.call_tool(
        "recall_memories", {"query": "what do new engineers get on their first day?"}
    )
    body = welcome.structured_content
    assert body is not None
    assert body["memories"]["core"][0]["source"] == "📄 onboarding.md → Onboarding"  # brief: source
