"""The health of the store of record: the SQLite file itself (or the PostgreSQL database), and
every memory's row.

``check_sqlite`` and ``check_postgres`` only read (they run before anything opens the store);
``check_rows`` with
``repair`` moves the rows that cannot be read or indexed to the ``set_aside`` table, whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cognitive_memory.errors import StorageError
from cognitive_memory.storage.database import inspect_file
from cognitive_memory.storage.migrations import MIGRATIONS
from cognitive_memory.upkeep.health import CheckResult, count_phrase

if TYPE_CHECKING:
    from cognitive_memory.system import CognitiveSystem

__all__ = ["check_postgres", "check_rows", "check_sqlite"]


def check_sqlite(path: Path) -> CheckResult:
    """Read-only: integrity_check, WAL mode and every migration recorded."""
    if not path.exists():
        return CheckResult("sqlite", "ok", f"no database yet at {path}: it is created on first use")
    try:
        integrity, journal, recorded = inspect_file(path)
    except StorageError as exc:
        if exc.code == "database_damaged":
            return CheckResult("sqlite", "fail", f"{path} is damaged ({exc.message}): {_salvage_hint(path)}")
        return CheckResult("sqlite", "fail", f"cannot read {path}: {exc.message}")
    if integrity != ["ok"]:
        return CheckResult(
            "sqlite", "fail", f"{path} is damaged ({'; '.join(integrity[:3])}): {_salvage_hint(path)}"
        )
    known = [name for name, _ in MIGRATIONS]
    missing = [name for name in known if name not in recorded]
    unknown = sorted(recorded - set(known))
    detail = f"integrity ok, {journal.upper()}, {count_phrase(len(recorded), 'migration')}"
    if unknown:
        return CheckResult("sqlite", "warn", f"{detail}; written by a newer version ({', '.join(unknown)})")
    if missing:
        return CheckResult("sqlite", "warn", f"{detail}; {', '.join(missing)} applied when the store opens")
    if journal != "wal":
        return CheckResult("sqlite", "warn", f"{detail}; switched to WAL when the store opens")
    return CheckResult("sqlite", "ok", detail)


def check_postgres(url: str) -> CheckResult:
    """Read-only: the server answers, the database records every migration (or is new), and the
    rights a server needs are granted; named without the password."""
    from cognitive_memory.storage.postgres.errors import server_name
    from cognitive_memory.storage.postgres.health import inspect_server

    where = server_name(url)
    try:
        health = inspect_server(url)
    except StorageError as exc:
        return CheckResult("database", "fail", exc.message)
    known = [name for name, _ in MIGRATIONS]
    missing = [name for name in known if name not in health.migrations]
    unknown = sorted(health.migrations - set(known))
    detail = f"PostgreSQL {health.version} at {where}, {count_phrase(len(health.migrations), 'migration')}"
    if health.lacking:
        return CheckResult(
            "database", "fail", f"{detail}; the user lacks {' and '.join(health.lacking)}: grant it"
        )
    if unknown:
        return CheckResult("database", "warn", f"{detail}; written by a newer version ({', '.join(unknown)})")
    if not health.migrations:
        return CheckResult("database", "ok", f"{detail}: a new database, its tables made on first use")
    if missing:
        return CheckResult("database", "warn", f"{detail}; {', '.join(missing)} applied when the store opens")
    return CheckResult("database", "ok", detail)


def _salvage_hint(path: Path) -> str:
    return (
        "restore a backup (`memory_system restore SNAPSHOT --force` sets the damaged file aside), or "
        f"salvage its rows with `sqlite3 {path} .recover`"
    )


def check_rows(system: CognitiveSystem, repair: bool = False) -> CheckResult:
    """Every memory's row can be read and indexed; ``repair`` sets aside those that cannot (moved,
    whole, to the ``set_aside`` table: never deleted), before the index is rebuilt."""
    try:
        found = system.records.damaged.find(system.encoder.dimension)
        if found and repair:
            system.records.damaged.set_aside(found)
        kept = system.records.damaged.set_aside_count()
    except StorageError as exc:
        return CheckResult("rows", "fail", exc.message)
    where = f"the set_aside table of {system.records.path}"
    if not found:
        earlier = (
            f"; {count_phrase(kept, 'memory', 'memories')} set aside earlier, kept in {where}" if kept else ""
        )
        return CheckResult("rows", "ok", f"every memory can be read and indexed{earlier}")
    named = "; ".join(f"{row.id!r}: {row.problem}" for row in found[:5])
    more = f"; and {len(found) - 5} more" if len(found) > 5 else ""
    count = count_phrase(len(found), "memory", "memories")
    if repair:
        detail = f"set aside {count} that could not be read or indexed ({named}{more}): kept in {where}"
        return CheckResult("rows", "warn", f"{detail} (docs/cli.md: Doctor)")
    detail = f"{count} cannot be read or indexed ({named}{more})"
    return CheckResult(
        "rows", "fail", f"{detail}: `memory_system doctor --repair` sets them aside (kept in {where})"
    )
