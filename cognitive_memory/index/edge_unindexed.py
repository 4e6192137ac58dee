"""Which points of an Edge shard its HNSW index does not cover: the count that starts a build.

Edge counts the vectors its indexes hold, old copies included: a point written again (its words,
or itself) moves to the segment searched exactly and leaves a deleted copy in the indexed one,
still counted. After the words of an older store are built, or after ``doctor --repair`` writes
every point again, Edge's count says every point is indexed while all are searched exactly. So
the store also counts the points written since the index last covered them: in the process that
writes them, and, for the next process to open the shard, in a file beside it (written at close;
a crash loses what was written since the last close, and Edge's own count is left).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Collection
from pathlib import Path

from cognitive_memory.regular_files import NotRegularFileError, read_regular, write_replacing

__all__ = ["UnindexedPoints"]

logger = logging.getLogger(__name__)


class UnindexedPoints:
    """The points written since the index last covered them (call under the shard's lock)."""

    def __init__(self, shard_path: Path) -> None:
        self._file = shard_path.with_name(f".{shard_path.name}.unindexed")
        self._written: set[str] = set()
        self._since_journal: set[str] | None = None
        self._carried = _read_count(self._file)  # left by the process that had the shard before

    def wrote(self, ids: Collection[str], *, deleted: bool = False) -> None:
        """Points written (or ``deleted``: no longer searched at all)."""
        for written in (self._written, self._since_journal):
            if written is not None:
                (written.difference_update if deleted else written.update)(ids)

    def count(self) -> int:
        """How many points were written since the index last covered them (at most)."""
        return len(self._written) + self._carried

    def journal(self) -> None:
        """A build from SQLite starts: what is written from now on, it will lack."""
        self._since_journal = set()

    def drop_journal(self) -> None:
        self._since_journal = None

    def adopted(self) -> None:
        """The shard built from SQLite serves: only what was written during its build is left."""
        self._written, self._since_journal = self._since_journal or set(), None
        self._carried = 0

    def indexed(self) -> None:
        """The optimizers indexed the shard as it is."""
        self._written.clear()
        self._carried = 0

    def save(self) -> None:
        """Leave the count to the next process that opens the shard."""
        count = self.count()
        if count == 0:
            with contextlib.suppress(FileNotFoundError):
                self._file.unlink()
            return
        write_replacing(self._file, f"{count}\n")


def _read_count(path: Path) -> int:
    """The count saved in ``path``; 0 when there is none or it is damaged (a full pass finds the
    points again), or when it is not a regular file, which is never waited on."""
    try:
        return max(0, int(read_regular(path, limit=64).decode("utf-8").strip()))
    except NotRegularFileError as exc:
        logger.warning("Ignoring %s: it is %s, not a count this store wrote.", path, exc.what)
        return 0
    except (OSError, ValueError):
        return 0
