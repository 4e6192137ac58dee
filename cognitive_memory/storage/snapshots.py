"""The SQLite side of snapshots and restores (``backup/``): the consistent copy of a database, what
a copy holds, the checks a snapshot's database must pass, and the database's file claimed and
staged for a restore. ``backup/`` keeps the directories, manifests and checksums, and asks here
for everything that reads or writes the database itself. SQLite's alone."""

from __future__ import annotations

import os
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any, Literal, NamedTuple

from cognitive_memory.errors import InvalidInputError, StorageError
from cognitive_memory.storage.schema import (
    migration_problem,
    recorded_migrations,
    schema_differences,
    summary,
)

__all__ = [
    "COUNTED_TABLES",
    "Claim",
    "CopyFacts",
    "check_snapshot_database",
    "claim_file",
    "copy_database",
    "memory_count_in",
    "queue_every_memory",
    "read_copy",
]

_SQLITE_FULL = 13
# Manifest count -> the table it counts.
COUNTED_TABLES = {
    "memories": "memories",
    "relations": "relations",
    "connections": "connections",
    "versions": "memory_versions",
    "sources": "sources",
}


class CopyFacts(NamedTuple):
    """What a copy holds: its integrity (``ok`` when whole), counts by ``COUNTED_TABLES``, the
    migrations it records and the encoder signature (``model:dimension``) it was built with."""

    integrity: str
    counts: dict[str, int]
    migrations: list[str]
    encoder: str | None


class Claim(NamedTuple):
    """What claiming a database's file found: ``alone`` (one self-contained file now, no process
    holds it), ``busy`` (another process does) or ``damaged`` (SQLite cannot read it: ``detail``)."""

    state: Literal["alone", "busy", "damaged"]
    detail: str = ""


def copy_database(database: Path, copy: Path) -> None:
    """Copy ``database`` to ``copy`` in one backup step over the whole file: a single read
    transaction, consistent while others write (WAL readers do not block writers). The copy is
    made a one-file (rollback journal) database and flushed to disk."""
    try:
        with (
            closing(sqlite3.connect(database, timeout=30)) as source,
            closing(sqlite3.connect(copy, isolation_level=None)) as target,
        ):
            source.backup(target)
            target.execute("PRAGMA journal_mode=DELETE")
    except sqlite3.Error as exc:
        if getattr(exc, "sqlite_errorcode", 0) & 0xFF == _SQLITE_FULL:
            raise StorageError(
                f"The disk holding {copy.parent.parent} is full ({exc}): no snapshot was made. Free some "
                "space (or delete old snapshots) and try again.",
                code="disk_full",
            ) from exc
        raise StorageError(f"Could not copy the memory database {database}: {exc}") from exc
    with copy.open("rb+") as handle:
        os.fsync(handle.fileno())


def read_copy(copy: Path) -> CopyFacts:
    """The integrity, counts, migrations and encoder of the database at ``copy`` (only its
    integrity when that is not ``ok``: nothing else of it is read)."""
    with closing(sqlite3.connect(copy)) as conn:
        integrity = _integrity(conn)
        if integrity != "ok":
            return CopyFacts(integrity, {}, [], None)
        return CopyFacts(integrity, *_facts(conn))


def _integrity(conn: sqlite3.Connection) -> str:
    rows = [str(row[0]) for row in conn.execute("PRAGMA integrity_check")]
    return "; ".join(rows[:3])


def _facts(conn: sqlite3.Connection) -> tuple[dict[str, int], list[str], str | None]:
    """Counts, applied migrations and the encoder signature of a database."""
    tables = {str(row[0]) for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    counts = {
        key: int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
        for key, table in COUNTED_TABLES.items()
        if table in tables
    }
    migrations: list[str] = []
    if "schema_migrations" in tables:
        migrations = [str(r[0]) for r in conn.execute("SELECT name FROM schema_migrations ORDER BY name")]
    encoder = None
    if "store_meta" in tables:
        row = conn.execute("SELECT value FROM store_meta WHERE key = 'encoder'").fetchone()
        encoder = str(row[0]) if row else None
    return counts, migrations, encoder


def check_snapshot_database(
    database: Path, migrations: list[str], schema_version: str | None, counts: dict[str, Any]
) -> None:
    """The snapshot's database at ``database``, opened read-only and immutable, passes
    integrity_check, records the first shipped migrations in order (``migrations``, its
    manifest's), has exactly the schema they make, and the manifest's ``counts``; else
    ``InvalidInputError`` naming the first thing that does not."""
    uri = f"{database.resolve().as_uri()}?mode=ro&immutable=1"
    try:
        with closing(sqlite3.connect(uri, uri=True)) as conn:
            _check(conn, database, migrations, schema_version, counts)
    except sqlite3.Error as exc:
        raise InvalidInputError(f"{database} cannot be read ({exc}): the snapshot is damaged.") from None


def _check(
    conn: sqlite3.Connection,
    database: Path,
    migrations: list[str],
    schema_version: str | None,
    counts: dict[str, Any],
) -> None:
    integrity = _integrity(conn)
    if integrity != "ok":
        raise InvalidInputError(f"{database} fails integrity_check ({integrity}).")
    recorded = recorded_migrations(conn)
    if recorded is None:
        raise InvalidInputError(f"{database} is not a memory database (it has no schema_migrations table).")
    problem = migration_problem(recorded)
    if problem is not None:
        raise InvalidInputError(
            f"{database} {problem} (`memory_system backup --list` shows other snapshots)."
        )
    if recorded != migrations:
        raise InvalidInputError(
            f"{database} records migrations up to {recorded[-1] if recorded else None!r}, its manifest "
            f"says {schema_version!r}: the snapshot was altered; restore another one."
        )
    differences = schema_differences(conn, len(recorded))
    if differences:
        raise InvalidInputError(
            f"{database} is not what its migrations make ({summary(differences)}): the snapshot was "
            "altered after it was made; restore another one (`memory_system backup --list`)."
        )
    held = _facts(conn)[0]
    if held != counts:
        raise InvalidInputError(f"{database} holds {held}, its manifest says {counts}.")


def memory_count_in(database: Path) -> int:
    """How many memories the database at ``database`` holds (0 when it or its table does not
    exist yet)."""
    if not database.is_file():
        return 0
    try:
        with closing(sqlite3.connect(database, timeout=5)) as conn:
            tables = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'memories'")
            if tables.fetchone() is None:
                return 0
            return int(conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0])
    except sqlite3.Error as exc:
        raise StorageError(f"Cannot read {database} ({exc}): move it away to restore in its place.") from exc


def claim_file(database: Path) -> Claim:
    """Make the database at ``database`` one self-contained file (its WAL checkpointed, the
    rollback journal mode), which fails while any process has it open: that is ``busy``.
    ``StorageError`` when it cannot be opened for another reason."""
    try:
        with closing(sqlite3.connect(database, isolation_level=None, timeout=2)) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            mode = str(conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0])
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            return Claim("busy")
        raise StorageError(f"Cannot open {database}: {exc}") from exc
    except sqlite3.DatabaseError as exc:
        return Claim("damaged", str(exc))
    return Claim("alone") if mode.lower() == "delete" else Claim("busy")


def queue_every_memory(database: Path) -> None:
    """Queue every memory of the database at ``database`` for the vector index (its outbox), so
    that the index is rebuilt from it. ``StorageError`` (SQLite's message) when it cannot be
    written."""
    try:
        with closing(sqlite3.connect(database, isolation_level=None)) as conn:
            conn.execute(
                "INSERT OR REPLACE INTO vector_outbox (memory_id, operation, queued_at) "
                "SELECT id, 'upsert', ? FROM memories",
                (time.time(),),
            )
    except sqlite3.Error as exc:
        raise StorageError(str(exc)) from exc
