"""CognitiveMemory's revision: what an edit made from a read carries to detect a change since."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

import pytest

from cognitive_memory.core.memory import CognitiveMemory, HierarchyLevel, MemoryType

NOW = datetime(2026, 1, 2, tzinfo=UTC)
MEMORY = CognitiveMemory(
    id="m1",
    content="Backups run nightly.",
    hierarchy_level=HierarchyLevel.CONTEXT,
    memory_type=MemoryType.SEMANTIC,
    created_date=NOW,
    timestamp=NOW,
    importance_score=0.5,
    tags=("ops",),
    metadata={"source_info": "runbook"},
)


@pytest.mark.parametrize(
    "change",
    [
        {"content": "Backups run hourly."},
        {"tags": ("ops", "backup")},
        {"tags": ("backup", "ops")},
        {"importance_score": 0.51},
        {"hierarchy_level": HierarchyLevel.EPISODE},
        {"memory_type": MemoryType.EPISODIC},
        {"metadata": {"source_info": "wiki"}},
        {"project": "alpha"},
    ],
)
def test_every_change_an_edit_could_undo_changes_the_revision(change: dict[str, Any]) -> None:
    assert dataclasses.replace(MEMORY, **change).revision != MEMORY.revision


def test_use_and_time_leave_the_revision_as_it_is() -> None:
    used = dataclasses.replace(MEMORY, access_count=9, last_accessed=NOW, modified_date=NOW, session_id="s")
    assert used.revision == MEMORY.revision
