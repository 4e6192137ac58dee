"""`memory_status` through the SDK's in-memory client reports the last consolidation: null until
one is applied, then its time and counts; the merged memory is listed in the trash by the CLI."""

from __future__ import annotations

from datetime import datetime

import pytest
from mcp import Client

from cognitive_memory.service import MemoryService
from cognitive_memory.system import CognitiveSystem
from tests.mcp.tools import call

pytestmark = [pytest.mark.anyio, pytest.mark.stores]  # each test on SQLite and on PostgreSQL

LIMIT = "The API rate limit is 600 requests per minute."


async def test_memory_status_reports_the_last_consolidation(
    client: Client, real_system: CognitiveSystem
) -> None:
    kept = (await call(client, "store_memory", {"text": LIMIT}))["memory_id"]
    gone = (await call(client, "store_memory", {"text": LIMIT + "!!"}))["memory_id"]
    before = await call(client, "memory_status", {})

    service = MemoryService(real_system, session_id="s1")
    dry = service.consolidate()
    untouched = [m.id for m in real_system.records.memories.get([kept, gone])]
    done = service.consolidate(apply=True)
    last = (await call(client, "memory_status", {}))["last_consolidation"]

    assert "last_consolidation" not in before  # never ran: a null field is left out
    assert dry.dry_run and dry.trashed == 1 and untouched == [kept, gone]
    assert (done.trashed, done.groups[0].survivor.id, done.groups[0].merged[0].id) == (1, kept, gone)
    assert (last["groups"], last["trashed"], last["links"], last["threshold"]) == (1, 1, 0, 0.92)
    assert datetime.fromisoformat(last["at"]).tzinfo is not None
    (entry,) = service.trash_list().entries
    assert (entry.id, entry.reason, entry.consolidated_into) == (gone, "consolidated", kept)
