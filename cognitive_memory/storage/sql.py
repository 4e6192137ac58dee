"""What the repositories use of a database, as protocols both stores of record satisfy.

A ``Connection`` runs statements with ``?`` placeholders and says which SQL it speaks
(``dialect``, ``storage/dialect.py``); a ``DatabaseAccess`` gives the repositories their
transactions and reads. SQLite's are ``sqlite3``'s connection (``connection.SQLiteConnection``)
and ``database.Database``; PostgreSQL's are ``storage/postgres/``'s. The repositories and their
SQL helpers are typed on these only, so one set of them runs on either database.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

from cognitive_memory.storage.dialect import Dialect

__all__ = ["EVERY_ROW", "Connection", "Cursor", "DatabaseAccess", "Transaction", "column_names"]

T = TypeVar("T")

# A LIMIT that keeps every row, for a statement that needs one before OFFSET or takes an optional
# limit: SQLite's ``LIMIT -1`` is an error in PostgreSQL, and PostgreSQL's ``LIMIT ALL`` in SQLite.
EVERY_ROW = 2**63 - 1


class Cursor(Protocol):
    """The rows of one statement, and what it did."""

    @property
    def rowcount(self) -> int: ...

    @property
    def description(self) -> Sequence[Sequence[Any]] | None: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def fetchmany(self, size: int = ..., /) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """One database connection: statements with ``?`` placeholders, in its SQL ``dialect``."""

    @property
    def dialect(self) -> Dialect: ...

    @property
    def in_transaction(self) -> bool: ...

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Cursor: ...


# A write transaction of the store: its connection, committed when the block ends.
Transaction = Callable[[], AbstractContextManager[Connection]]


class DatabaseAccess(Protocol):
    """What the repositories use of a store's database: write transactions and reads, each read
    one snapshot of the database (see ``database.Database`` for SQLite's)."""

    def transaction(self) -> AbstractContextManager[Connection]:
        """One write transaction, rolled back if the body raises."""
        ...

    def read(self, query: Callable[[Connection], T]) -> T:
        """What ``query`` reads, in one read transaction (joining the one this thread is in)."""
        ...

    def read_apart(self, query: Callable[[Connection], T]) -> T:
        """What ``query`` reads, in a read transaction of its own that no other read waits behind."""
        ...

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """The rows of one SELECT (through ``read``)."""
        ...

    def snapshot(self) -> int | None:
        """A number for the read this thread is in, which no other read has (None outside one)."""
        ...


def column_names(cursor: Cursor) -> list[str]:
    """The names of the columns of ``cursor``'s rows (none for a statement that returns no rows)."""
    return [str(column[0]) for column in cursor.description or ()]
