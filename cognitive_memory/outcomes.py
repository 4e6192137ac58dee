"""What the memory system's operations answer: a store, an update, a status report."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cognitive_memory.core.memory import CognitiveMemory
from cognitive_memory.index.vector_store import VectorHit, VectorStoreInfo
from cognitive_memory.storage.memories import MemoryCounts

__all__ = ["StoreOutcome", "SystemStatus", "UpdateOutcome"]


@dataclass(frozen=True, slots=True)
class StoreOutcome:
    """A stored memory; ``queued`` when its vector waits in the outbox for the index.

    ``duplicate``: the same text was already in the project, and ``memory`` is that memory (nothing
    was stored). ``novelty`` is 1 minus the highest cosine to another memory of the project (None
    when the index could not be asked); ``similar`` the memories at or above the near-duplicate
    threshold, most similar first; ``nearest`` the memory of the highest cosine, whatever it is.
    ``updated``: a memory held the key, and ``memory`` is it as updated (``version`` the number its
    previous state was kept as; none in a dry run).
    """

    memory: CognitiveMemory
    queued: bool = False
    duplicate: bool = False
    novelty: float | None = None
    similar: tuple[VectorHit, ...] = ()
    nearest: VectorHit | None = None
    updated: bool = False
    version: int | None = None


@dataclass(frozen=True, slots=True)
class UpdateOutcome:
    """The memory after an update; ``changed`` names the fields that changed (empty: nothing did,
    and no version was kept), ``version`` the number its previous state was kept as."""

    memory: CognitiveMemory
    changed: tuple[str, ...]
    version: int | None = None
    queued: bool = False


@dataclass(frozen=True, slots=True)
class SystemStatus:
    counts: MemoryCounts
    vector_store: VectorStoreInfo | None
    vector_store_error: str | None
    pending_vector_writes: int
    activity: dict[str, datetime]
    database_path: str  # the store of record (``StoreOfRecord.where``)
    database_bytes: int
    encoder_name: str
    encoder_ready: bool
    configuration: dict[str, Any] = field(default_factory=dict)
    # (memories whose words the index holds, memories) while an older store's are built.
    words_index: tuple[int, int] | None = None
    # (memories whose words are weighed again, memories) while a drifted large store's are.
    words_reweighing: tuple[int, int] | None = None
    # Each table recall keeps in memory (a serving process): building, following or degraded.
    recall_state: dict[str, str] = field(default_factory=dict)

    @property
    def healthy(self) -> bool:
        """SQLite and the index agree, and no vector write waits."""
        return self.problem is None

    @property
    def problem(self) -> str | None:
        """Why the store is not healthy, in a sentence that says what happens next (None: it is)."""
        if self.vector_store is None:
            reason = self.vector_store_error
            return f"The vector index cannot be reached ({reason}): recall finds by words only."
        if self.pending_vector_writes:
            return (
                f"{self.pending_vector_writes:,} vector writes wait for the index: they are retried in the "
                "background and at the next start."
            )
        held, total = self.vector_store.vector_count, self.counts.total
        if held != total:
            return (
                f"The vector index holds {held:,} vectors for {total:,} memories: `memory_system doctor "
                "--repair` copies them from SQLite (a server on the embedded index does so by itself "
                "within a minute of starting)."
            )
        behind = [name for name, state in self.recall_state.items() if state == "degraded"]
        if behind:
            verb = "is" if len(behind) == 1 else "are"
            return (
                f"The {' and '.join(behind)} kept in memory fell behind the change log and {verb} read "
                "again: until then recall reads the store (slower, never stale)."
            )
        return None
