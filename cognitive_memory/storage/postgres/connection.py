"""A psycopg connection in the shape the repositories use (SQLite's ``execute`` with ``?`` marks).

The repositories write one SQL for both databases, with SQLite's ``?`` parameter marks; psycopg
takes ``%s`` and reads every other ``%`` as the start of one. ``statement`` rewrites a statement
once (the rewrite is cached per statement string): each ``?`` outside a quoted string or
identifier becomes ``%s`` and each ``%`` becomes ``%%``. Values cross as psycopg adapts them:
``bytes`` to and from ``bytea``, ``float`` as ``double precision``, ``int`` as ``bigint``; a
``numeric`` result (what ``sum`` and ``avg`` of integers give) comes back as SQLite's would, an
``int`` when whole and a ``float`` otherwise, never a ``Decimal`` (``prepare``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import psycopg
from psycopg import adapt, pq

from cognitive_memory.storage.dialect import POSTGRES, Dialect

__all__ = ["PostgresConnection", "prepare", "statement"]


@functools.lru_cache(maxsize=4096)
def statement(sql: str) -> str:
    """``sql`` with SQLite's ``?`` marks as psycopg's ``%s`` and every literal ``%`` doubled; a
    ``?`` inside '...' or "..." stays (its ``%`` are doubled all the same: psycopg reads them)."""
    out: list[str] = []
    quote = ""
    for char in sql:
        if char == "%":
            out.append("%%")
        elif quote:
            out.append(char)
            if char == quote:  # a doubled quote closes and opens again: the same text either way
                quote = ""
        elif char in "'\"":
            quote = char
            out.append(char)
        else:
            out.append("%s" if char == "?" else char)
    return "".join(out)


class _NumericLoader(adapt.Loader):
    """``numeric`` as an ``int`` when whole, else a ``float`` (as SQLite's sum and avg give)."""

    def load(self, data: adapt.Buffer) -> int | float:
        text = bytes(data).decode("ascii")
        try:
            return int(text)
        except ValueError:
            return float(text)


def prepare(conn: psycopg.Connection[Any]) -> None:
    """Make a new connection give results as SQLite's would (see the module's docstring)."""
    conn.adapters.register_loader("numeric", _NumericLoader)


class PostgresConnection:
    """The repositories' ``Connection`` (``storage/sql.py``) on PostgreSQL: one psycopg connection
    (autocommit: the database opens and ends transactions with BEGIN and COMMIT, as on SQLite)
    behind SQLite's ``execute``/``executemany``."""

    dialect: Dialect = POSTGRES

    def __init__(self, conn: psycopg.Connection[Any], trace: Callable[[str], object] | None = None) -> None:
        self.raw = conn
        self._trace = trace

    def execute(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        """Run one statement; its cursor (``fetchone``, ``fetchall``, iteration, ``rowcount``)."""
        if self._trace is not None:
            self._trace(sql)
        return self.raw.execute(statement(sql), tuple(params))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> psycopg.Cursor[Any]:
        """Run one statement for each of ``rows`` (psycopg pipelines them); the cursor's
        ``rowcount`` is the total."""
        if self._trace is not None:
            self._trace(sql)
        cursor = self.raw.cursor()
        cursor.executemany(statement(sql), [tuple(row) for row in rows])
        return cursor

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open on the connection (begun and not yet ended)."""
        return self.raw.info.transaction_status != pq.TransactionStatus.IDLE
