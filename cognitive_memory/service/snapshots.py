"""Snapshots of the memory database: make one, or list them (snapshot_memories, `memory_system
backup` and `backup --list`); their requests, answers and text.

A snapshot is made while servers write (``backup.snapshot``), one at a time per folder, and a name
is used once (``backup.folder``). Restoring stays a shell command, since every server using the
memory must stop first: each snapshot in an answer carries the exact command (``restore``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field

from cognitive_memory.backup.folder import (
    BackupPlace,
    free_name,
    next_destination,
    one_at_a_time,
    restore_command,
)
from cognitive_memory.backup.snapshot import Snapshot, create_snapshot, list_snapshots, rotate_snapshots
from cognitive_memory.errors import InvalidInputError

__all__ = [
    "LIST_LIMIT",
    "SnapshotName",
    "SnapshotOut",
    "SnapshotResult",
    "counts_text",
    "create",
    "format_snapshots",
    "listed",
    "run",
    "size_text",
]

# A snapshot_memories list names the newest this many (``total`` counts them all).
LIST_LIMIT = 50
# The rule (letters, digits, '.', '_', '-', starting with a letter or digit) is the core's
# (``backup.snapshot.valid_name``); the boundary publishes its length.
SnapshotName = Annotated[str, Field(min_length=1, max_length=64)]
Step = Callable[[str], None]


class SnapshotOut(BaseModel):
    """One snapshot: its name, directory, time, size and counts, and how to restore it."""

    name: str | None = None
    path: str
    created_at: str
    size_bytes: int
    counts: dict[str, int] = Field(description="memories, relations, connections, versions, sources.")
    schema_version: str | None = None
    restore: str = Field(description="The shell command that restores it (stop every server first).")


class SnapshotResult(BaseModel):
    success: bool = True
    folder: str
    snapshot: SnapshotOut | None = Field(default=None, description="The snapshot made.")
    snapshots: list[SnapshotOut] | None = Field(default=None, description="Listed: oldest first.")
    total: int | None = Field(default=None, description="Listed: how many the folder holds.")
    deleted: list[str] | None = Field(default=None, description="Older unnamed snapshots deleted (keep).")
    message: str


def run(place: BackupPlace, name: str | None, list_them: bool) -> SnapshotResult:
    """snapshot_memories: make a snapshot (named ``name``, if given), or list them; not both."""
    if list_them and name is not None:
        raise InvalidInputError(
            "Give `name` to make a snapshot, or `list: true` to list them, not both.", code="invalid_value"
        )
    return listed(place.folder, place, limit=LIST_LIMIT) if list_them else create(place, name)


def create(
    place: BackupPlace,
    name: str | None,
    *,
    destination: Path | None = None,
    keep: int | None = None,
    step: Step | None = None,
) -> SnapshotResult:
    """Snapshot ``place``'s database into ``destination`` (default: a new ``<UTC time>[-name]``
    directory of ``place.folder``); then, with ``keep``, delete that folder's oldest unnamed
    snapshots beyond the newest ``keep``. Refuses a name that is not allowed or already taken."""
    folder = destination.parent if destination is not None else place.folder
    with one_at_a_time(folder):
        if name is not None:
            free_name(folder, name)
        target = destination if destination is not None else next_destination(folder, name)
        made = create_snapshot(place.server or place.database, target, name=name, step=step)
        deleted = rotate_snapshots(folder, keep) if keep is not None else None
    out = _out(made, place)
    called = f" {name!r}" if name else ""
    return SnapshotResult(
        folder=str(folder),
        snapshot=out,
        deleted=[str(path) for path in deleted] if deleted is not None else None,
        message=f"Snapshot{called} made: {counts_text(out.counts)}, {size_text(out.size_bytes)}",
    )


def listed(folder: Path, place: BackupPlace, *, limit: int | None = None) -> SnapshotResult:
    """The whole snapshots in ``folder``, oldest first (the newest ``limit`` of them, if given)."""
    found = list_snapshots(folder)
    shown = found[-limit:] if limit is not None and limit > 0 else found
    more = f" (the newest {len(shown)} shown)" if len(shown) < len(found) else ""
    return SnapshotResult(
        folder=str(folder),
        snapshots=[_out(snapshot, place) for snapshot in shown],
        total=len(found),
        message=f"{len(found)} snapshot(s) in {folder}{more}" if found else f"No snapshots in {folder}",
    )


def _out(snapshot: Snapshot, place: BackupPlace) -> SnapshotOut:
    manifest = snapshot.manifest
    return SnapshotOut(
        name=manifest.name,
        path=str(snapshot.path),
        created_at=manifest.created_at,
        size_bytes=snapshot.size_bytes,
        counts=manifest.counts,
        schema_version=manifest.schema_version,
        restore=restore_command(snapshot.path, place),
    )


def counts_text(counts: dict[str, int]) -> str:
    return (
        f"{counts.get('memories', 0)} memories ({counts.get('relations', 0)} links, "
        f"{counts.get('connections', 0)} associations, {counts.get('versions', 0)} versions)"
    )


def size_text(size: int) -> str:
    return f"{size / 1e6:.1f} MB" if size >= 100_000 else f"{size / 1e3:.1f} kB"


def format_snapshots(result: SnapshotResult) -> str:
    """The snapshot made, or the list, each with its restore command."""
    items = [result.snapshot] if result.snapshot else result.snapshots or []
    lines = [f"{'✓' if result.snapshot else '📦'} {result.message}"]
    for item in items:
        label = f"{item.name} " if item.name else ""
        lines += [
            "",
            f"{label}{item.created_at}  {counts_text(item.counts)}  {size_text(item.size_bytes)}",
            f"   Path: {item.path}",
            f"   Restore (stop every server using this memory first): {item.restore}",
        ]
    if result.deleted:
        names = ", ".join(Path(path).name for path in result.deleted)
        lines += ["", f"Deleted {len(result.deleted)} older unnamed snapshot(s): {names}."]
    return "\n".join(lines)
