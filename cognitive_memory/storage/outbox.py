"""The vector outbox: index writes SQLite committed that the vector index has not confirmed.

Rows are queued in the transaction that writes their memory (``rows.queue_vector_writes``);
``index_replication.IndexReplication`` applies them and clears them here.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from contextlib import closing
from pathlib import Path

from cognitive_memory.storage.sql import Connection, DatabaseAccess

__all__ = ["TO_BE_INDEXED", "Outbox", "queue", "to_be_indexed_at"]

# How many memories the vector index should hold now: every memory, less those whose vector write
# is still queued (one statement, one snapshot).
TO_BE_INDEXED = (
    "SELECT (SELECT count(*) FROM memories) - (SELECT count(*) FROM vector_outbox WHERE operation = 'upsert')"
)


def to_be_indexed_at(path: Path) -> int:
    """How many memories the vector index should hold now (``TO_BE_INDEXED``) in the SQLite
    database at ``path``, read on a read-only connection of its own by a process that has no store
    open (the index builder); 0 when the database cannot be read. SQLite's alone."""
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
            (count,) = conn.execute(TO_BE_INDEXED).fetchone()
    except sqlite3.Error:
        return 0
    return int(count)


def queue(conn: Connection, writes: Iterable[tuple[str, str, float]]) -> None:
    """Queue vector writes (memory id, operation, time) in the caller's transaction. A memory
    queued already leaves its place and joins the end of the queue, as SQLite's INSERT OR REPLACE
    put it (a new row): the index rewrites the first queued first (``IndexReplication``), and an
    upsert in place would keep a memory's first place instead."""
    last: dict[str, tuple[str, str, float]] = {}
    for write in writes:
        last.pop(write[0], None)
        last[write[0]] = write
    conn.executemany("DELETE FROM vector_outbox WHERE memory_id = ?", [(memory_id,) for memory_id in last])
    conn.executemany(
        "INSERT INTO vector_outbox (memory_id, operation, queued_at) VALUES (?, ?, ?)", list(last.values())
    )


class Outbox:
    """The ``vector_outbox`` rows of one database."""

    def __init__(self, database: DatabaseAccess) -> None:
        self._db = database

    def pending(self) -> list[tuple[str, str]]:
        """(memory id, operation) of vector writes not yet confirmed by the vector store."""
        return [(r[0], r[1]) for r in self._db.rows("SELECT memory_id, operation FROM vector_outbox")]

    def to_be_indexed(self) -> int:
        """How many memories the vector index should hold now (``TO_BE_INDEXED``), read on a
        connection of its own (``Database.read_apart``): counting the memories reads a whole index
        of the table (0.26 s at 1,000,000 rows on a busy 2-core machine), and recalls do not wait."""
        (count,) = self._db.read_apart(lambda conn: conn.execute(TO_BE_INDEXED).fetchone())
        return int(count)

    def clear(self, ids: Iterable[str], queued_before: float | None = None) -> None:
        """Drop the queued writes of these memories (the index confirmed them); with
        ``queued_before`` (seconds since the epoch) only those queued by then: a write queued again
        since (a neighbour in time changed its words) stays for the index to confirm."""
        with self._db.transaction() as conn:
            if queued_before is None:
                conn.executemany("DELETE FROM vector_outbox WHERE memory_id = ?", [(i,) for i in ids])
            else:
                conn.executemany(
                    "DELETE FROM vector_outbox WHERE memory_id = ? AND queued_at <= ?",
                    [(i, queued_before) for i in ids],
                )
