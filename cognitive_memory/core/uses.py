"""A use of memories: what a recall (or a read by id) counts as used, and what it recalled
together."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

__all__ = ["Use"]


@dataclass(frozen=True, slots=True)
class Use:
    """``used`` count one access each at ``at``; each pair of ``core`` was recalled together, at
    ``stamp`` (seconds since the epoch, by the wall clock: the co-recall links' time)."""

    used: tuple[str, ...]
    core: tuple[str, ...]
    at: datetime
    stamp: float

    def pairs(self) -> list[tuple[str, str]]:
        """The co-recalled pairs of ``core``."""
        return [(a, b) for i, a in enumerate(self.core) for b in self.core[i + 1 :]]
