"""The folder snapshots go to by default (``<data dir>/backups``): one snapshot made there at a
time, a name used once, the shell command that restores one.

Two snapshots asked for at once (two MCP calls, a call and ``memory_system backup``) take turns on
an ``flock`` of ``.snapshot.lock`` in the folder, held while a snapshot's directory is chosen,
written and published: the second sees the first's name and directory, so a name is never taken
twice and two snapshots never race for one directory.
"""

from __future__ import annotations

import errno
import fcntl
import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cognitive_memory.backup.snapshot import DATABASE_NAME, list_snapshots, snapshot_dir_name, valid_name
from cognitive_memory.errors import InvalidInputError, StorageError
from cognitive_memory.regular_files import NotRegularFileError, open_lock

__all__ = ["BACKUPS_DIR", "BackupPlace", "free_name", "next_destination", "one_at_a_time", "restore_command"]

BACKUPS_DIR = "backups"
LOCK_NAME = ".snapshot.lock"
_FULL = (errno.ENOSPC, errno.EDQUOT)


@dataclass(frozen=True, slots=True)
class BackupPlace:
    """The memory database a server or command uses, its data directory, and so the default
    snapshot folder (``<data dir>/backups``)."""

    data_dir: Path
    database: Path
    # The store of record's URL when it is a database server (PostgreSQL), whose snapshots are
    # copies into a SQLite file (``storage/moving.py``); None: the SQLite file ``database``.
    server: str | None = None

    @property
    def folder(self) -> Path:
        return self.data_dir / BACKUPS_DIR


def free_name(folder: Path, name: str) -> str:
    """``name`` if it can name a snapshot (``valid_name``) and no snapshot in ``folder`` has it."""
    valid_name(name)
    if any(snapshot.manifest.name == name for snapshot in list_snapshots(folder)):
        raise InvalidInputError(
            f"A snapshot named {name!r} already exists in {folder}: choose another name (the list shows "
            "the names taken).",
            code="name_taken",
        )
    return name


def next_destination(folder: Path, name: str | None, now: datetime | None = None) -> Path:
    """``<UTC time>[-name]`` in ``folder``, with ``.2``, ``.3``... if that second is taken."""
    base = snapshot_dir_name(now or datetime.now(UTC), name)
    candidate, n = folder / base, 1
    while candidate.exists():
        n += 1
        candidate = folder / f"{base}.{n}"
    return candidate


@contextmanager
def one_at_a_time(folder: Path) -> Iterator[None]:
    """Hold the folder's snapshot lock (waiting for another snapshot to finish); a full disk while
    making one is a ``disk_full`` StorageError."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        guard = open_lock(folder / LOCK_NAME)
    except NotRegularFileError as exc:
        raise StorageError(
            f"Cannot lock {folder} for a snapshot: {exc.path} is {exc.what}, not the lock file this "
            "program makes. Remove it and try again.",
            code="lock_file",
        ) from None
    except OSError as exc:
        raise _storage_error(folder, exc) from exc
    with guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        try:
            yield
        except OSError as exc:
            raise _storage_error(folder, exc) from exc


def _storage_error(folder: Path, exc: OSError) -> StorageError:
    where = f" ({exc.filename})" if exc.filename else ""
    if exc.errno in _FULL:
        return StorageError(
            f"The disk holding {folder} is full{where}: no snapshot was made. Free some space (or "
            "delete old snapshots) and try again.",
            code="disk_full",
        )
    return StorageError(f"Could not write a snapshot in {folder}: {exc.strerror or exc}{where}.")


def restore_command(snapshot: Path, place: BackupPlace) -> str:
    """The shell command that puts ``snapshot`` back in place of ``place``'s database (with the
    data directory, and the database when it is not the usual one, named, so it restores where
    the snapshot came from whatever the shell's own settings). For a database server's store:
    the move of the snapshot's file into an empty database (``move-store``)."""
    if place.server is not None:
        copy = shlex.quote(str(snapshot / DATABASE_NAME))
        return (
            f"COGNITIVE_MEMORY_DATABASE_URL= COGNITIVE_MEMORY_DB_PATH={copy} memory_system move-store "
            "postgresql://USER:PASSWORD@HOST/EMPTY_DATABASE"
        )
    env = [f"COGNITIVE_MEMORY_DATA_DIR={shlex.quote(str(place.data_dir))}"]
    if place.database != place.data_dir / DATABASE_NAME:
        env.append(f"COGNITIVE_MEMORY_DB_PATH={shlex.quote(str(place.database))}")
    return f"{' '.join(env)} memory_system restore {shlex.quote(str(snapshot))} --force"
