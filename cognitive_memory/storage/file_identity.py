"""Is the database still where it was opened? A file deleted under a running process is not gone for
it: SQLite goes on writing to the open (unlinked) file and every commit succeeds, while nothing of it
survives the process. So the store remembers the identity (device, inode) of its file and of the
directory holding it, and checks them around every write and in status."""

from __future__ import annotations

import os
from pathlib import Path

from cognitive_memory.errors import StorageError

__all__ = ["FileIdentity"]


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        state = os.stat(path)
    except OSError:
        return None
    return state.st_dev, state.st_ino


class FileIdentity:
    """The (device, inode) of a file and of its directory, taken when the file was opened."""

    def __init__(self, path: Path) -> None:
        self.path = path.resolve()
        self._expected = (_identity(self.path.parent), _identity(self.path))

    def problem(self) -> str | None:
        """What happened to the file or its directory since it was opened, if anything."""
        directory, file = (_identity(self.path.parent), _identity(self.path))
        if directory is None:
            return f"its directory {self.path.parent} was deleted"
        if directory != self._expected[0]:
            return f"its directory {self.path.parent} was replaced by another one"
        if file is None:
            return f"{self.path} was deleted"
        if file != self._expected[1]:
            return f"{self.path} was replaced by another file"
        return None

    def check(self) -> None:
        """Raise ``StorageError`` if the file or its directory is no longer the one opened."""
        problem = self.problem()
        if problem is not None:
            raise StorageError(
                f"The memory database cannot be written: {problem} while this process was running, so "
                "nothing stored now would survive it. Restore the data directory from a backup, or "
                "restart the server to start over in a new one.",
                code="data_dir_gone",
            )
