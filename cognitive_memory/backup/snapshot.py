"""Snapshots of the memory database: made while servers write, checked before any restore.

A snapshot is a directory holding a copy of the SQLite database, which the store of record makes
(``storage/snapshots.py``: SQLite's online backup API, one consistent read transaction, so every
commit before it is in and none after it), and
``manifest.json``: counts, model, schema version, integrity and the copy's sha256. SQLite holds
every memory with its vector, so the vector index is rebuilt from the copy (``restore``).

Crash safety: the snapshot is written into a hidden ``.<name>.partial-<pid>-<random>`` directory,
the database and the manifest are flushed to disk, and only then is the directory renamed to its
final name. A process killed before the rename leaves a hidden partial directory that no listing
shows and no restore accepts (the next backup in that folder removes it).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cognitive_memory.errors import InvalidInputError, StorageError
from cognitive_memory.processes import is_running
from cognitive_memory.regular_files import NotRegularFileError, open_regular, read_regular
from cognitive_memory.storage.migrations import MIGRATIONS
from cognitive_memory.storage.opening import named, open_store
from cognitive_memory.storage.snapshots import check_snapshot_database, copy_database, read_copy

__all__ = [
    "DATABASE_NAME",
    "FORMAT_VERSION",
    "MANIFEST_NAME",
    "PARTIAL_MARK",
    "Manifest",
    "Snapshot",
    "create_snapshot",
    "file_sha256",
    "list_snapshots",
    "read_manifest",
    "rotate_snapshots",
    "snapshot_dir_name",
    "valid_name",
    "verify_snapshot",
]

FORMAT_VERSION = 1
MANIFEST_NAME = "manifest.json"
DATABASE_NAME = "cognitive_memory.db"
_MAX_MANIFEST_BYTES = 1 << 20
PARTIAL_MARK = ".partial-"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
Step = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Manifest:
    """What a snapshot holds, written beside its database copy."""

    created_at: str
    counts: dict[str, int]
    schema_version: str | None
    migrations: list[str]
    embedding_model: str | None
    embedding_dimension: int | None
    integrity: str
    sha256: str
    database_bytes: int
    source_database: str
    name: str | None = None
    format_version: int = FORMAT_VERSION

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A finished snapshot directory and its manifest."""

    path: Path
    manifest: Manifest

    @property
    def database(self) -> Path:
        return self.path / DATABASE_NAME

    @property
    def size_bytes(self) -> int:
        return sum(f.stat().st_size for f in self.path.iterdir() if f.is_file())


def valid_name(name: str) -> str:
    """``name`` if it can name a snapshot directory (letters, digits, ``.``, ``_``, ``-``)."""
    if not _NAME.match(name):
        raise InvalidInputError(
            f"Snapshot name {name!r} is not allowed: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit.",
            code="invalid_value",
        )
    return name


def snapshot_dir_name(when: datetime, name: str | None) -> str:
    """``<UTC time>`` or ``<UTC time>-<name>``: sorting by name sorts by time."""
    stamp = when.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{name}" if name else stamp


def create_snapshot(
    database: Path | str, destination: Path, *, name: str | None = None, step: Step | None = None
) -> Snapshot:
    """Copy ``database`` (a SQLite file, or a database server's URL: its rows are moved into the
    snapshot's SQLite file) into the new directory ``destination`` with its manifest. Refuses a
    destination that exists and is not empty; the directory appears whole or not at all."""
    if isinstance(database, Path) and not database.is_file():
        raise InvalidInputError(f"No memory database at {database}: there is nothing to back up.")
    if destination.exists() and (not destination.is_dir() or any(destination.iterdir())):
        raise InvalidInputError(f"{destination} already exists and is not empty: choose another destination.")
    destination.parent.mkdir(parents=True, exist_ok=True)
    _remove_abandoned_partials(destination.parent)
    partial = destination.parent / f".{destination.name}{PARTIAL_MARK}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    partial.mkdir()
    try:
        manifest = _fill(database, partial, name, step or (lambda _: None))
        _publish(partial, destination)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return Snapshot(destination, manifest)


def _fill(source: Path | str, partial: Path, name: str | None, step: Step) -> Manifest:
    copy = partial / DATABASE_NAME
    if isinstance(source, str):
        database = named(source)  # the server's URL, without its password
        step(f"copying {database} into a SQLite file, from one snapshot of it")
        copy_from_server(source, copy)
    else:
        database = str(source)
        step(f"copying {database} with SQLite's online backup")
        copy_database(source, copy)
    step("checking the copy (integrity_check)")
    facts = read_copy(copy)
    if facts.integrity != "ok":
        raise StorageError(
            f"The copy of {database} is damaged ({facts.integrity}): the database itself may be."
        )
    model, _, dimension = facts.encoder.rpartition(":") if facts.encoder else (None, "", "")
    step("computing its sha256")
    manifest = Manifest(
        created_at=datetime.now(UTC).isoformat(),
        counts=facts.counts,
        schema_version=facts.migrations[-1] if facts.migrations else None,
        migrations=facts.migrations,
        embedding_model=model or None,
        embedding_dimension=int(dimension) if dimension.isdigit() else None,
        integrity=facts.integrity,
        sha256=file_sha256(copy),
        database_bytes=copy.stat().st_size,
        source_database=database,
        name=name,
    )
    _write_durably(partial / MANIFEST_NAME, json.dumps(manifest.to_json(), indent=2).encode())
    return manifest


def copy_from_server(url: str, copy: Path) -> None:
    """Every row of the store of record at ``url`` moved into the new SQLite file ``copy``
    (``StoreOfRecord.copy_into``: one read of the server, counted on both sides)."""
    source, target = open_store(url), open_store(str(copy))
    try:
        source.copy_into(target)
    finally:
        target.close()
        source.close()


def file_sha256(path: Path) -> str:
    """The sha256 of a regular file's bytes, in hex (``open_regular``: anything else is refused)."""
    digest = hashlib.sha256()
    with open_regular(path) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _write_durably(path: Path, data: bytes) -> None:
    with path.open("wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _publish(partial: Path, destination: Path) -> None:
    """The commit point: rename the finished directory (onto an empty one, if it exists)."""
    _fsync_dir(partial)
    try:
        os.replace(partial, destination)
    except OSError as exc:
        raise StorageError(f"Could not move the snapshot into {destination}: {exc.strerror or exc}") from exc
    _fsync_dir(destination.parent)


def _remove_abandoned_partials(folder: Path) -> None:
    """Partial directories of backups whose process is gone (killed mid-backup)."""
    for partial in folder.glob(f".*{PARTIAL_MARK}*"):
        pid = partial.name.rsplit(PARTIAL_MARK, 1)[1].split("-", 1)[0]
        if pid.isdigit() and not is_running(int(pid)):
            shutil.rmtree(partial, ignore_errors=True)


def read_manifest(directory: Path) -> Manifest:
    """The manifest of a snapshot directory, or ``InvalidInputError`` saying why there is none."""
    path = directory / MANIFEST_NAME
    if not directory.is_dir():
        raise InvalidInputError(f"{directory} is not a snapshot directory.")
    try:
        text = read_regular(path, limit=_MAX_MANIFEST_BYTES + 1)
    except FileNotFoundError:
        raise InvalidInputError(f"{directory} is not a whole snapshot: {MANIFEST_NAME} is missing.") from None
    except NotRegularFileError as exc:
        raise _not_a_snapshot_file(directory, exc) from None
    if len(text) > _MAX_MANIFEST_BYTES:
        raise InvalidInputError(f"{path} is larger than a snapshot manifest can be: the snapshot is damaged.")
    try:
        data = json.loads(text)
        version = data.get("format_version")
        if version != FORMAT_VERSION:
            raise InvalidInputError(
                f"{path} has snapshot format {version!r}; this version reads format {FORMAT_VERSION}."
            )
        return Manifest(**data)
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise InvalidInputError(f"{path} cannot be read as a snapshot manifest ({exc}).") from None


def verify_snapshot(directory: Path) -> Snapshot:
    """The snapshot at ``directory`` once its manifest, checksum, integrity, migrations, schema and
    counts agree; ``InvalidInputError`` naming the first thing that does not. The checksum alone
    proves nothing against someone who can write the snapshot (they recompute it): the schema
    check is what keeps a planted trigger or view out of the restored store."""
    manifest = read_manifest(directory)
    snapshot = Snapshot(directory, manifest)
    if _database_sha256(snapshot) != manifest.sha256:
        raise InvalidInputError(
            f"{snapshot.database} does not match its manifest's sha256: the snapshot is damaged."
        )
    unknown = sorted(set(manifest.migrations) - {name for name, _ in MIGRATIONS})
    if unknown:
        raise InvalidInputError(
            f"{directory} was made by a newer version (schema {', '.join(unknown)}): upgrade first."
        )
    check_snapshot_database(snapshot.database, manifest.migrations, manifest.schema_version, manifest.counts)
    return snapshot


def _database_sha256(snapshot: Snapshot) -> str:
    """The sha256 of the snapshot's database, or why it cannot be read."""
    try:
        return file_sha256(snapshot.database)
    except FileNotFoundError:
        raise InvalidInputError(
            f"{snapshot.path} is not a whole snapshot: {DATABASE_NAME} is missing."
        ) from None
    except NotRegularFileError as exc:
        raise _not_a_snapshot_file(snapshot.path, exc) from None
    except OSError as exc:
        raise InvalidInputError(f"{snapshot.database} cannot be read ({exc.strerror or exc}).") from None


def _not_a_snapshot_file(directory: Path, refused: NotRegularFileError) -> InvalidInputError:
    return InvalidInputError(
        f"{directory} is not a whole snapshot: {refused.path.name} is {refused.what}, not a regular "
        "file. Restore another snapshot (`memory_system backup --list`) or remove this one."
    )


def list_snapshots(folder: Path) -> list[Snapshot]:
    """The whole snapshots in ``folder``, oldest first (unreadable and partial ones left out)."""
    if not folder.is_dir():
        return []
    found = []
    for directory in sorted(folder.iterdir()):
        if directory.name.startswith(".") or not directory.is_dir():
            continue
        try:
            found.append(Snapshot(directory, read_manifest(directory)))
        except InvalidInputError:
            continue
    return sorted(found, key=lambda snapshot: (snapshot.manifest.created_at, snapshot.path.name))


def rotate_snapshots(folder: Path, keep: int) -> list[Path]:
    """Delete the oldest unnamed snapshots in ``folder`` beyond the newest ``keep``; named ones
    (``--name``, ``before-restore-...``) are never deleted. Returns what was deleted."""
    unnamed = [s.path for s in list_snapshots(folder) if s.manifest.name is None]
    doomed = unnamed[: max(0, len(unnamed) - keep)]
    for path in doomed:
        shutil.rmtree(path)
    return doomed
