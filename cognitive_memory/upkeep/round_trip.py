"""The doctor's last check: a scratch memory stored, recalled as the best match and deleted
through the service every transport calls, with nothing left behind."""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING

from cognitive_memory.errors import CognitiveMemoryError
from cognitive_memory.service import MemoryService, StoreContext
from cognitive_memory.upkeep.health import CheckResult
from cognitive_memory.upkeep.vectors import totals

if TYPE_CHECKING:
    from cognitive_memory.system import CognitiveSystem

__all__ = ["SCRATCH_TAG", "check_round_trip"]

SCRATCH_TAG = "doctor-scratch"


def check_round_trip(system: CognitiveSystem) -> CheckResult:
    """Store a scratch memory, recall it as the best match, delete it; nothing is left behind."""
    service = MemoryService(system, session_id=f"doctor-{uuid.uuid4()}")
    started = time.perf_counter()
    try:
        before = totals(system)
        problem = _store_recall_delete(service)
        system.flush()
        after = totals(system)
    except CognitiveMemoryError as exc:
        return CheckResult("round_trip", "fail", exc.message)
    if problem is None and after != before:
        problem = f"memories and vectors went from {before} to {after}"
    if problem:
        return CheckResult("round_trip", "fail", problem)
    millis = (time.perf_counter() - started) * 1000
    return CheckResult("round_trip", "ok", f"stored, recalled as core #1 and deleted in {millis:.0f} ms")


def _store_recall_delete(service: MemoryService) -> str | None:
    """What went wrong in the round trip, if anything; the scratch memory is always deleted."""
    text = (
        f"memory_system doctor scratch memory {uuid.uuid4().hex}: stored, recalled and deleted "
        "to check that the memory works end to end."
    )
    context = StoreContext(tags=[SCRATCH_TAG], source_info="memory_system doctor", importance_score=0.0)
    stored = service.store_experience(text, context)
    scratch = stored.memory_id or ""  # a store that is no dry run always names its memory
    try:
        if stored.queued:
            return "the index did not accept the scratch memory's vector (it was queued)"
        recalled = service.retrieve_memories(text, ["core"], max_results=1, include_bridges=False)
        core = recalled.memories.core
        if not core or core[0].id != scratch:
            return "recall did not return the scratch memory as core #1"
    finally:
        deleted = service.delete_memories([scratch]).deleted
    if deleted != [scratch] or service.system.records.memories.get([scratch]):
        return "the scratch memory could not be deleted"
    return None
