"""The ``sources`` check of the doctor: loaded memories that no loaded source holds.

A memory loaded from a file or a repository is owned by its source's chunk table: ``load``,
``remove-file`` and ``git-load`` find it there, and ``forget`` refuses it as loaded. Two loads of
one tree at once (before loads took the loader lock, issue #15) each added every chunk, and the
second's chunk table left the first's copies owned by nothing: recall returned them twice and no
command could remove them. ``--repair`` deletes such orphans; their text is still in the files,
and loading again restores anything that was not a duplicate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cognitive_memory.errors import StorageError
from cognitive_memory.upkeep.health import CheckResult

if TYPE_CHECKING:
    from cognitive_memory.system import CognitiveSystem

__all__ = ["check_loaded_sources", "orphaned_memories"]


def orphaned_memories(system: CognitiveSystem) -> list[str]:
    """Ids of memories marked as loaded that no source's chunk table holds (read-only)."""
    return system.records.sources.orphans()


def check_loaded_sources(system: CognitiveSystem, repair: bool) -> CheckResult:
    """Every loaded memory belongs to a loaded source; with ``repair``, orphans are deleted."""
    try:
        orphans = orphaned_memories(system)
    except StorageError as exc:
        return CheckResult("sources", "fail", f"could not read the loaded sources: {exc.message}")
    if not orphans:
        return CheckResult("sources", "ok", "every loaded memory belongs to a loaded file or repository")
    if repair:
        removed = system.delete(orphans)
        return CheckResult(
            "sources",
            "ok",
            f"removed {len(removed)} loaded memories that no loaded source held (duplicates of two "
            "loads at once); load the files again if one of them is missing",
        )
    return CheckResult(
        "sources",
        "warn",
        f"{len(orphans)} loaded memories belong to no loaded file or repository (left by two loads "
        "at once): recall may show them twice and no command removes them; run "
        "`memory_system doctor --repair` to delete them",
    )
