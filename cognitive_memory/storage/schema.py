"""The shape a memory database must have: exactly what its recorded migrations make.

A database that comes from elsewhere (a snapshot to restore) is trusted only when its migration
rows are the first N shipped migrations, in order, and every schema object in it (table, index,
trigger, view, with its SQL) is one those N migrations make in a fresh database. Anything else
runs inside every later write: a trigger on ``vector_outbox`` that deletes from ``memories``
makes each acknowledged store vanish. The tables ``ANALYZE`` creates (``sqlite_stat*``) only
guide the query planner and are left out. SQLite's alone (``sqlite_master``).
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import dataclass

from cognitive_memory.storage import migrations

__all__ = ["SchemaObject", "migration_problem", "recorded_migrations", "schema_differences", "summary"]

_SHOWN = 3


@dataclass(frozen=True, slots=True)
class SchemaObject:
    """One row of ``sqlite_master``, its SQL with runs of whitespace made one space."""

    kind: str
    name: str
    table: str
    sql: str | None

    def describe(self) -> str:
        on = f" on {self.table}" if self.kind in ("trigger", "index") else ""
        return f"{self.kind} {self.name!r}{on}"


def recorded_migrations(conn: sqlite3.Connection) -> list[str] | None:
    """The migration names ``conn`` records, in name order; None without a migrations table."""
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
    if found.fetchone() is None:
        return None
    return [str(row[0]) for row in conn.execute("SELECT name FROM schema_migrations ORDER BY name")]


def migration_problem(recorded: list[str]) -> str | None:
    """None when ``recorded`` are the first shipped migrations in order; else what is wrong."""
    known = [name for name, _ in migrations.MIGRATIONS]
    unknown = [name for name in recorded if name not in known]
    if unknown:
        return (
            f"records migration {unknown[0]!r}, unknown to this version: a newer version made it "
            "(upgrade, then restore) or it was altered"
        )
    expected = known[: len(recorded)]
    if recorded != expected:
        missing = next(name for name in expected if name not in recorded)
        return f"records later migrations without {missing!r}: it was altered"
    return None


def schema_differences(conn: sqlite3.Connection, applied: int) -> list[str]:
    """What differs between ``conn``'s schema and the one the first ``applied`` migrations make:
    extra objects, missing ones, and ones whose SQL differs (empty when they agree)."""
    actual = _schema(conn)
    expected = _expected_schema(applied)
    extra = [actual[key].describe() for key in sorted(actual.keys() - expected.keys())]
    missing = [f"{expected[key].describe()} is missing" for key in sorted(expected.keys() - actual.keys())]
    changed = [
        f"{actual[key].describe()} is defined differently"
        for key in sorted(actual.keys() & expected.keys())
        if actual[key] != expected[key]
    ]
    return [*(f"an extra {text}" for text in extra), *missing, *changed]


def summary(differences: list[str]) -> str:
    """The first few differences in one line."""
    shown = "; ".join(differences[:_SHOWN])
    more = len(differences) - _SHOWN
    return f"{shown} (and {more} more)" if more > 0 else shown


def _schema(conn: sqlite3.Connection) -> dict[tuple[str, str], SchemaObject]:
    rows = conn.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_stat%' ESCAPE '\\'"
    )
    return {
        (str(kind), str(name)): SchemaObject(
            str(kind), str(name), str(table), " ".join(str(sql).split()) if sql is not None else None
        )
        for kind, name, table, sql in rows
    }


def _expected_schema(applied: int) -> dict[tuple[str, str], SchemaObject]:
    with closing(sqlite3.connect(":memory:", isolation_level=None)) as conn:
        migrations.apply_migrations(conn, applied)
        return _schema(conn)
