"""The dashboard's trash page: one row per trash entry, and its Restore button brings back that
entry (a memory forgotten twice has two)."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from cognitive_memory.service import MemoryChanges, MemoryService
from cognitive_memory.system import CognitiveSystem
from tests.dashboard.conftest import csrf_of


def test_each_trash_entry_restores_its_own_text(
    client: TestClient, service: MemoryService, hash_system: CognitiveSystem
) -> None:
    old, updated = "The build cache lives on the NFS share.", "The build cache moved to the local SSD."
    memory_id = service.store_experience(old).memory_id
    (exported,) = hash_system.records.memories.get([memory_id])
    service.update_memory(memory_id, MemoryChanges(text=updated))
    service.forget_memories([memory_id])
    hash_system.records.memories.add([exported])  # what an import of the old export writes
    service.forget_memories([memory_id])

    page = client.get("/trash").text
    entries = dict(re.findall(r'<td>([^<]+)</td>.*?name="entry" value="(\d+)"', page, re.DOTALL))
    restored = client.post(
        "/trash/restore", data={"csrf": csrf_of(page), "memory_id": memory_id, "entry": entries[updated]}
    )

    assert set(entries) == {old, updated}
    assert restored.status_code == 303
    assert restored.headers["location"].startswith(f"/memories/{memory_id}")
    (memory,) = service.get_memories([memory_id], include_history=True).memories
    assert memory.content == updated
    assert [version.content for version in memory.history or []] == [old, old]
    assert service.trash_list().total == 0
