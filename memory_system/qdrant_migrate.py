"""`memory_system qdrant migrate --to URL`: copy the index to a Qdrant server from SQLite's vectors.

SQLite keeps every memory's vector, so nothing is re-embedded: the copy reads SQLite (safe while a
server process runs: WAL readers do not block) and upserts into the target collection in batches,
removes points SQLite does not know, and checks the target's count at the end.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlparse

if TYPE_CHECKING:
    from cognitive_memory.storage import SQLiteMemoryStore, VectorStore

__all__ = ["MigrationReport", "check_url", "migrate"]

BATCH = 500


@dataclass(frozen=True)
class MigrationReport:
    """What a migration wrote and what the target holds afterwards."""

    copied: int
    stale_removed: int
    target_count: int
    without_vector: int

    @property
    def verified(self) -> bool:
        return self.target_count == self.copied


def check_url(url: str) -> str | None:
    """None when ``url`` looks like a Qdrant HTTP(S) address, else what is wrong with it."""
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        return f"--to must be a Qdrant server URL such as http://localhost:6333, not {url!r}."
    return None


def migrate(
    memories: SQLiteMemoryStore,
    target: VectorStore,
    progress: Callable[[int, int], None] | None = None,
    batch_size: int = BATCH,
) -> MigrationReport:
    """Upsert every vector SQLite keeps into ``target`` (``progress(done, total)`` after each
    batch), delete the target's points SQLite does not know, and count the target."""
    from cognitive_memory.storage import VectorPoint, payload_for

    total = memories.counts().total
    known: set[str] = set()
    done = without_vector = 0
    for batch in memories.iter_memories(batch_size):
        points = [
            VectorPoint(m.id, m.cognitive_embedding, payload_for(m))
            for m in batch
            if m.cognitive_embedding is not None
        ]
        target.upsert(points)
        known.update(point.id for point in points)
        without_vector += len(batch) - len(points)
        done += len(batch)
        if progress is not None:
            progress(done, total)
    stale = [point_id for point_id in target.ids() if point_id not in known]
    for start in range(0, len(stale), batch_size):
        target.delete(stale[start : start + batch_size])
    return MigrationReport(len(known), len(stale), target.count(), without_vector)
