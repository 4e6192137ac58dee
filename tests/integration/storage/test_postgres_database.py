"""The memory database on PostgreSQL: transactions, one snapshot per read, one writer at a time
across processes (the change log's seqs commit in order), and errors as StorageError."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest

from cognitive_memory.errors import StorageError
from cognitive_memory.storage.postgres import PostgresDatabase, PostgresMemoryStore
from cognitive_memory.storage.postgres.connection import PostgresConnection

_MEMORY = (
    "INSERT INTO memories (id, content, hierarchy_level, memory_type, created_date, timestamp, "
    "importance_score, strength, metadata, tags, dimensions, embedding) "
    "VALUES (?, ?, 0, 'episodic', '2026-12-07', 1.5, 0.5, 1.0, ?, '[]', '{}', ?)"
)


def add_memory(conn: PostgresConnection, memory_id: str, metadata: str = "{}") -> None:
    conn.execute(_MEMORY, (memory_id, f"text of {memory_id}", metadata, b"\x00\x01"))


@pytest.fixture
def open_store(postgres_url: str, tmp_path: Path) -> Iterator[Callable[[], PostgresMemoryStore]]:
    """Open stores on one database (each call one more), closed after the test."""
    opened: list[PostgresMemoryStore] = []

    def open_one() -> PostgresMemoryStore:
        opened.append(PostgresMemoryStore(postgres_url, tmp_path / "memories.postgres"))
        return opened[-1]

    yield open_one
    for store in opened:
        store.close()


@pytest.fixture
def database(open_store: Callable[[], PostgresMemoryStore]) -> PostgresDatabase:
    return open_store().database


def test_a_write_that_raises_rolls_back_and_logs_nothing(database: PostgresDatabase) -> None:
    with pytest.raises(RuntimeError), database.transaction() as conn:
        add_memory(conn, "gone")
        raise RuntimeError("the body failed")

    assert database.rows("SELECT count(*) FROM memories") == [(0,)]
    assert database.rows("SELECT count(*) FROM change_log") == [(0,)]


def test_a_statement_the_database_refuses_is_a_storage_error_and_rolls_back(
    database: PostgresDatabase,
) -> None:
    with pytest.raises(StorageError, match="failed a write"), database.transaction() as conn:
        add_memory(conn, "first")
        add_memory(conn, "first")

    assert database.rows("SELECT count(*) FROM memories") == [(0,)]
    with database.transaction() as conn:  # the connection went back to the pool usable
        add_memory(conn, "second")
    assert database.rows("SELECT id FROM memories") == [("second",)]


def test_values_cross_as_they_were_given(database: PostgresDatabase) -> None:
    with database.transaction() as conn:
        add_memory(conn, "m", metadata='{"share": "50%", "mark": "?"}')

    row = database.rows("SELECT embedding, timestamp, metadata, rowid FROM memories WHERE id = ?", ("m",))
    assert row == [(b"\x00\x01", 1.5, '{"share": "50%", "mark": "?"}', 1)]
    assert database.rows("SELECT '?', ? || '%'", ("a",)) == [("?", "a%")]
    sums = database.rows("SELECT sum(access_count), avg(access_count), sum(timestamp) FROM memories")
    assert sums == [(0, 0.0, 1.5)] and [type(value) for value in sums[0]] == [int, float, float]
    assert database.rows("SELECT avg(n) FROM (VALUES (1), (2)) AS v (n)") == [(1.5,)]


def test_a_read_is_one_snapshot_while_another_store_commits(
    open_store: Callable[[], PostgresMemoryStore],
) -> None:
    reader, writer = open_store().database, open_store().database

    def read_twice(conn: PostgresConnection) -> tuple[int, int, bool]:
        (before,) = conn.execute("SELECT count(*) FROM memories").fetchone()
        with writer.transaction() as other:
            add_memory(other, "committed meanwhile")
        (after,) = conn.execute("SELECT count(*) FROM memories").fetchone()
        joined = reader.read(lambda inner: inner is conn)
        return before, after, joined

    assert reader.read(read_twice) == (0, 0, True)
    assert reader.rows("SELECT count(*) FROM memories") == [(1,)]


def test_a_read_inside_a_write_sees_the_write(database: PostgresDatabase) -> None:
    with database.transaction() as conn:
        add_memory(conn, "pending")
        assert database.rows("SELECT id FROM memories") == [("pending",)]
        assert database.snapshot() is None


def test_a_write_waits_for_another_stores_write_and_its_seq_comes_after(
    open_store: Callable[[], PostgresMemoryStore],
) -> None:
    first, second = open_store().database, open_store().database
    second_began = threading.Event()

    def write_second() -> None:
        with second.transaction() as conn:
            second_began.set()
            add_memory(conn, "second")

    with ThreadPoolExecutor(1) as pool, first.transaction() as conn:
        add_memory(conn, "first")
        waiting = pool.submit(write_second)
        assert not second_began.wait(0.3)  # held behind the first write's lock
    waiting.result()

    assert first.rows("SELECT memory_id FROM change_log ORDER BY seq") == [("first",), ("second",)]


def test_seqs_commit_in_order_under_writers_from_several_stores(
    open_store: Callable[[], PostgresMemoryStore],
) -> None:
    """A reader that has seen seq N never later finds a committed seq below N it had not seen."""
    writers = [open_store().database for _ in range(3)]
    reader = open_store().database
    done = threading.Event()

    def write(index: int) -> None:
        for n in range(15):
            with writers[index].transaction() as conn:
                add_memory(conn, f"w{index}-{n}")

    seen: set[int] = set()
    late: list[int] = []
    with ThreadPoolExecutor(3) as pool:
        futures = [pool.submit(write, i) for i in range(3)]
        for future in futures:
            future.add_done_callback(lambda _f: done.set() if all(f.done() for f in futures) else None)
        while not done.is_set():
            seqs = {seq for (seq,) in reader.rows("SELECT seq FROM change_log")}
            head = max(seen, default=0)
            late += [seq for seq in seqs - seen if seq < head]
            seen |= seqs
        for future in futures:
            future.result()

    assert late == []
    assert reader.rows("SELECT count(*) FROM memories") == [(45,)]


def test_reads_on_several_threads_each_take_a_connection_of_the_pool(database: PostgresDatabase) -> None:
    barrier = threading.Barrier(3, timeout=10)

    def backend(conn: PostgresConnection) -> int:
        barrier.wait()  # every thread inside its read at once
        return int(conn.execute("SELECT pg_backend_pid()").fetchone()[0])

    def read(_n: int) -> int:
        return database.read(backend)

    with ThreadPoolExecutor(3) as pool:
        pids = set(pool.map(read, range(3)))

    assert len(pids) == 3


def test_a_write_to_a_database_dropped_and_made_again_is_refused(
    postgres_url: str, database: PostgresDatabase
) -> None:
    name = psycopg.conninfo.conninfo_to_dict(postgres_url)["dbname"]
    admin_url = psycopg.conninfo.make_conninfo(postgres_url, dbname="postgres")
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')

    with pytest.raises(StorageError, match="dropped or replaced"), database.transaction() as conn:
        conn.execute("CREATE TABLE written (n INT)")
    assert database.rows("SELECT count(*) FROM pg_tables WHERE tablename = 'written'") == [(0,)]


def test_reads_go_on_after_the_servers_connections_were_ended(database: PostgresDatabase) -> None:
    database.rows("SELECT 1")
    with psycopg.connect(database.url, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid != pg_backend_pid()"
        )

    assert database.rows("SELECT 2") == [(2,)]
