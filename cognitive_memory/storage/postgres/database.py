"""The memory database on a PostgreSQL server: the same transactions and reads as SQLite's
``storage.database.Database``, so the same repositories run on it.

Writes: one at a time per database, across every process that opens it. Each write transaction
first takes a transaction-scoped advisory lock (``pg_advisory_xact_lock``), so writes commit in
the order they began: the change log's sequence numbers commit in order (a reader that has seen
seq N never later finds a committed seq below N) and a check made before a write (is this key
free?) holds until its commit, as under SQLite's one writer. Inside a process a lock keeps a
second thread from taking a second connection only to wait on the server.

Reads: each is one ``REPEATABLE READ READ ONLY`` transaction (one snapshot, as SQLite's read
transaction), on a connection of the pool: threads read side by side, each on its own
connection, and never wait behind a write. A read inside a read, or inside this thread's write,
joins it. The pool holds at most ``POOL_SIZE`` connections; a thread that finds them all in use
waits for one (``POOL_WAIT_SECONDS``).

``path`` is not the database (that is on the server, named by ``url``): it is the place on this
machine that stands for the store, beside which the system keeps what goes beside a store
(backups; the loaders' lock is the database's own, ``held``), and ``location`` checks that the
database is still the one opened.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import socket
import threading
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from psycopg import pq
from psycopg_pool import ConnectionPool

from cognitive_memory.errors import StorageError
from cognitive_memory.storage.own_changes import OwnChanges
from cognitive_memory.storage.postgres.connection import PostgresConnection, prepare
from cognitive_memory.storage.postgres.errors import server_name, storage_error

__all__ = ["POOL_SIZE", "POOL_WAIT_SECONDS", "WRITE_LOCK", "PostgresDatabase", "ServerIdentity"]

T = TypeVar("T")

Setup = Callable[[PostgresConnection], object]

# The advisory lock every write transaction (and every migration) takes first: one number for
# this application, held per database by the server.
WRITE_LOCK = 0x636D_6D65_6D6F_7279  # "cmmemory"
# The first key of the named locks (``held``: the second is the name's CRC-32): "cmme".
_NAMED_LOCKS = 0x636D_6D65
POOL_SIZE = 8
POOL_WAIT_SECONDS = 30.0
# How long a write waits for another process's write before it gives up (SQLite's BUSY_SECONDS).
_LOCK_WAIT = "30s"
_IDENTITY = "SELECT oid FROM pg_database WHERE datname = current_database()"
# The last seq the change log handed out (0 for none, or no log): read under the write lock, where
# no other write takes one, and a statement of its own, so its snapshot is taken after the lock.
_LOG_HEAD = "SELECT coalesce(pg_sequence_last_value(to_regclass('change_log_seq_seq')), 0)"
# One round trip: the transaction, its lock, which database this is (``ServerIdentity``) and the
# change log's last seq (``OwnChanges``: what the write appends comes after it).
_BEGIN_WRITE = f"BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK}), ({_IDENTITY}); {_LOG_HEAD}"
# One round trip: the log's last seq as the write leaves it, and the commit.
_END_WRITE = f"{_LOG_HEAD}; COMMIT"
_BEGIN_READ = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"


class ServerIdentity:
    """Which database was opened (its oid on the server), checked at every write: a database
    dropped and made again under the same name is another one, and a write is refused there
    rather than acknowledged into a store nobody opened."""

    def __init__(self, url: str, oid: int) -> None:
        self._where = server_name(url)
        self._expected = oid
        self._seen = oid

    def saw(self, oid: int | None) -> None:
        """Record the oid a write found, and raise ``StorageError`` when it is not the one opened."""
        self._seen = -1 if oid is None else oid
        self.check()

    def check(self) -> None:
        """Raise ``StorageError`` when the last write found another database than the one opened."""
        if self._seen != self._expected:
            raise StorageError(
                f"The memory database {self._where} was dropped or replaced since this process opened "
                "it: nothing more is written. Restart the server.",
                code="data_dir_gone",
            )


class PostgresDatabase:
    """One database on a PostgreSQL server, opened once per store (``storage.database.Database``'s
    interface: ``transaction``, ``read``, ``snapshot``, ``read_apart``, ``rows``, ``trace``)."""

    def __init__(self, url: str, path: Path, setup: Sequence[Setup] = ()) -> None:
        """Connect to ``url`` and run each of ``setup`` on a connection of its own (migrations),
        in order; then open the pool. ``path`` stands for the store on this machine."""
        self.url = url
        self.path = path
        self._trace: Callable[[str], object] | None = None
        options = {"autocommit": True, "options": f"-c lock_timeout={_LOCK_WAIT}"}
        try:
            with psycopg.connect(url, **options) as first:  # type: ignore[arg-type]  # psycopg's kwargs are typed loosely
                prepare(first)
                for step in setup:
                    step(PostgresConnection(first))
                (oid,) = first.execute(_IDENTITY).fetchone() or (0,)
        except psycopg.Error as exc:
            raise storage_error(exc, url, "opening the memory database") from exc
        self.location = ServerIdentity(url, int(oid))
        self.own_changes = OwnChanges()  # the change log's rows this object's writes appended
        self._pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            url,
            kwargs=options,
            configure=prepare,
            min_size=1,
            max_size=POOL_SIZE,
            timeout=POOL_WAIT_SECONDS,
            open=True,
        )
        self._lock = threading.RLock()
        self._writing = threading.local()  # ``conn`` while this thread is in a write transaction
        self._reading = threading.local()  # ``conn`` and ``snapshot`` while in a read of its own
        self._snapshots = itertools.count(1)

    @contextmanager
    def transaction(self) -> Iterator[PostgresConnection]:
        """One write transaction, the database's write lock taken first; rolled back if the body
        raises. The change log's rows it appended are recorded as this object's own
        (``own_changes``)."""
        with self._lock, self._begun(_BEGIN_WRITE, "a write") as (raw, cursor):
            conn = PostgresConnection(raw, self._trace)
            try:
                cursor.nextset()  # past BEGIN's result, to the lock's
                self.location.saw((cursor.fetchone() or (None, None))[1])
                cursor.nextset()  # to the log's last seq
                before = int((cursor.fetchone() or (0,))[0])
                self._writing.conn = conn
                try:
                    yield conn
                finally:
                    self._writing.conn = None
                after = int((raw.execute(_END_WRITE).fetchone() or (0,))[0])
                self._traced("COMMIT")
                self.own_changes.add(before, after)
            except psycopg.Error as exc:
                self._roll_back(raw)
                raise storage_error(exc, self.url, "a write") from exc
            except BaseException:
                self._roll_back(raw)
                raise

    def read(self, query: Callable[[PostgresConnection], T]) -> T:
        """What ``query`` reads, in one read transaction: all it reads is one snapshot of the
        database. A read inside another joins it, and a read inside this thread's write
        transaction joins that (it sees the write's own changes)."""
        joined = getattr(self._writing, "conn", None) or getattr(self._reading, "conn", None)
        try:
            if joined is not None:
                return query(joined)
            with self._begun(_BEGIN_READ, "a read") as (raw, _cursor):
                return self._read_on(raw, query)
        except psycopg.Error as exc:
            raise storage_error(exc, self.url, "a read") from exc

    def _read_on(self, raw: psycopg.Connection[Any], query: Callable[[PostgresConnection], T]) -> T:
        conn = PostgresConnection(raw, self._trace)
        self._reading.conn, self._reading.snapshot = conn, next(self._snapshots)
        try:
            return query(conn)
        finally:
            self._reading.conn = self._reading.snapshot = None
            self._roll_back(raw)  # nothing was written: ending it is all

    def snapshot(self) -> int | None:
        """A number for the read this thread is in, which no other read has: what is read twice
        under one number is the same. None outside such a read, and inside a write."""
        if getattr(self._writing, "conn", None) is not None:
            return None
        return getattr(self._reading, "snapshot", None)

    def read_apart(self, query: Callable[[PostgresConnection], T]) -> T:
        """What ``query`` reads, in one read transaction on a connection of its own, opened for it
        and closed after: a long read that takes no connection from the pool."""
        try:
            with psycopg.connect(self.url, autocommit=True) as raw:
                prepare(raw)
                conn = PostgresConnection(raw, self._trace)
                raw.execute(_BEGIN_READ)
                self._traced(_BEGIN_READ)
                return query(conn)
        except psycopg.Error as exc:
            raise storage_error(exc, self.url, "a read") from exc

    @contextmanager
    def held(self, name: str, waiting: Callable[[str], None]) -> Iterator[None]:
        """Hold the advisory lock ``name`` of this database (a session lock, on a connection of
        its own, let go and closed after; the server releases it when this process dies), waiting
        for its holder first; the connection names this host and process (``application_name``)
        so that one waiting can say who holds it."""
        key = (_NAMED_LOCKS, zlib.crc32(name.encode()) - 2**31)  # two int4 keys: apart from WRITE_LOCK's
        me = f"cognitive_memory {socket.gethostname()[:40]} pid {os.getpid()}"
        try:
            with psycopg.connect(self.url, autocommit=True, application_name=me) as raw:
                (taken,) = raw.execute("SELECT pg_try_advisory_lock(%s, %s)", key).fetchone() or (False,)
                if not taken:
                    waiting(_holder(raw, key))
                    raw.execute("SELECT pg_advisory_lock(%s, %s)", key)
                yield
                # Let go before closing: the server ends a closed session a moment later, and the
                # next holder, in this process or another, would find it still held.
                raw.execute("SELECT pg_advisory_unlock(%s, %s)", key)
        except psycopg.Error as exc:
            raise storage_error(exc, self.url, f"holding the {name} lock") from exc

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """The rows of one SELECT (through ``read``)."""
        return self.read(lambda conn: conn.execute(sql, params).fetchall())

    def size_bytes(self) -> int:
        """What the database takes on the server's disk."""
        (size,) = self.rows("SELECT pg_database_size(current_database())")[0]
        return int(size)

    def trace(self, callback: Callable[[str], object] | None) -> None:
        """Have ``callback`` see every statement run from now on (None: stop), the transactions'
        ``BEGIN ...``, ``COMMIT`` and ``ROLLBACK`` among them, as SQLite's trace sees them."""
        self._trace = callback

    def _traced(self, statement: str) -> None:
        if self._trace is not None:
            self._trace(statement)

    def _roll_back(self, raw: psycopg.Connection[Any]) -> None:
        if _roll_back(raw):
            self._traced("ROLLBACK")

    def close(self) -> None:
        with self._lock:
            self._pool.close()

    @contextmanager
    def _begun(self, begin: str, doing: str) -> Iterator[tuple[psycopg.Connection[Any], psycopg.Cursor[Any]]]:
        """A connection of the pool with ``begin`` run on it (and its cursor), given back after.
        A connection the server closed while it lay in the pool (a restart, a dropped database)
        is dropped and ``begin`` run on another: nothing was done on it yet."""
        raw, cursor = self._first_usable(begin, doing)
        try:
            yield raw, cursor
        finally:
            self._pool.putconn(raw)

    def _first_usable(self, begin: str, doing: str) -> tuple[psycopg.Connection[Any], psycopg.Cursor[Any]]:
        dropped = 0
        while True:
            try:
                raw = self._pool.getconn()
            except psycopg.Error as exc:
                raise storage_error(exc, self.url, doing) from exc
            try:
                cursor = raw.execute(begin)
            except psycopg.Error as exc:
                self._pool.putconn(raw)  # the pool drops a broken one
                dropped += 1
                if not raw.broken or dropped > POOL_SIZE:
                    raise storage_error(exc, self.url, doing) from exc
            else:
                self._traced(begin)
                return raw, cursor


def _holder(raw: psycopg.Connection[Any], key: tuple[int, int]) -> str:
    """How the holder of the advisory lock ``key`` named its connection, or "unknown"."""
    row = raw.execute(
        "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
        "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 "
        "AND l.classid::bigint = %s AND l.objid::bigint = %s "
        "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        (key[0] & 0xFFFFFFFF, key[1] & 0xFFFFFFFF),
    ).fetchone()
    return str(row[0]) if row and row[0] else "unknown"


def _roll_back(raw: psycopg.Connection[Any]) -> bool:
    """End the transaction open on ``raw``, if one is (a broken connection has none to end);
    whether one was."""
    if raw.closed or raw.info.transaction_status == pq.TransactionStatus.IDLE:
        return False
    # A connection that broke has no transaction left on the server; the pool drops it.
    with contextlib.suppress(psycopg.OperationalError):
        raw.execute("ROLLBACK")
    return True
