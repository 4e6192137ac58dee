"""Whether the vector index holds every memory's words, and how far their build has come.

A store made before the words were indexed (its points carry only the meaning) gets them built
in the background (``cognitive_memory/replicas/index_words.py``), in the order of the memories' rowids;
``store_meta`` keeps the last rowid done (``WORDS_THROUGH``), so a restarted build resumes there,
and, once every memory's words are in the index, the marker ``WORDS_COMPLETE``. A new store has
the marker from its first migration on (``0017_words_indexed``), and a rebuild of the index from
SQLite sets it. A memory stored after the build began is written with its words: the build only
has to reach the rowids that existed before.

The words are also weighed again, every memory's, when the store's average length drifts from the
one they were weighed against (``word_documents``). A store above ``index_replication.REWEIGH_INLINE``
memories does it in the background too: the new average and ``REWEIGH_THROUGH`` (0) are written in
one transaction, the same thread goes through the rowids, and the key goes once it reaches the
last. Recall keeps searching the words in the index meanwhile (the memories not yet weighed again
are off by the drift, at most ``sparse.AVERAGE_DRIFT``). A drift during the pass starts it again
from the first rowid, as a new pass (the key's value is ``rowid/pass``); the pass moves its
watermark only from the value it read, so a restart is never overwritten.
"""

from __future__ import annotations

import threading
import time
import uuid
from functools import partial

from cognitive_memory.core.store.values import WordsProgress
from cognitive_memory.storage.properties import keep
from cognitive_memory.storage.sql import Connection, DatabaseAccess

__all__ = [
    "REWEIGH_THROUGH",
    "WORDS_COMPLETE",
    "WORDS_THROUGH",
    "IndexedWords",
    "WordsProgress",
    "begin_reweigh",
]

WORDS_COMPLETE = "words_indexed"
WORDS_THROUGH = "words_indexed_through"
# The last rowid whose words were weighed again against the current average, while a pass runs.
REWEIGH_THROUGH = "words_reweighed_through"
# A process that did not build the words itself looks for the marker again after this many
# seconds (another process, the index's owner, builds them): recall does not read it each time.
RECHECK_SECONDS = 5.0


class IndexedWords:
    """The marker and the watermark of the words' build, in ``store_meta``."""

    def __init__(self, database: DatabaseAccess, recheck_seconds: float = RECHECK_SECONDS) -> None:
        self._db = database
        self._recheck = recheck_seconds
        self._complete = False
        self._checked_at = -float("inf")
        self._lock = threading.Lock()

    def complete(self) -> bool:
        """True when the index holds every memory's words (kept once true; while false, read
        again at most every ``recheck_seconds``)."""
        if self._complete:
            return True
        with self._lock:
            if time.monotonic() - self._checked_at < self._recheck:
                return self._complete
            self._checked_at = time.monotonic()
            self._complete = self._db.read(_marked)
        return self._complete

    def mark_complete(self) -> None:
        """Record that the index holds every memory's words (after the build, or a rebuild)."""
        with self._db.transaction() as conn:
            keep(conn, WORDS_COMPLETE, "1")
            conn.execute("DELETE FROM store_meta WHERE key = ?", (WORDS_THROUGH,))
        self._complete = True

    def next_batch(self, limit: int) -> list[tuple[int, str]]:
        """The (rowid, id) of the first ``limit`` memories past the watermark, in rowid order
        (none once the marker is there: another process may have set it)."""
        return self._db.read(lambda conn: [] if _marked(conn) else _after(conn, _through(conn) or 0, limit))

    def advance(self, rowid: int) -> None:
        """Move the watermark to ``rowid`` (never back: two builders may run, one per process)."""
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = "
                "CASE WHEN CAST(excluded.value AS BIGINT) > CAST(store_meta.value AS BIGINT) "
                "THEN CAST(excluded.value AS BIGINT) ELSE CAST(store_meta.value AS BIGINT) END",
                (WORDS_THROUGH, str(rowid)),
            )

    def progress(self) -> WordsProgress | None:
        """(memories whose words are built, memories in the store), or None when complete."""
        if self.complete():
            return None
        return self._db.read(partial(_progress, key=WORDS_THROUGH))

    def reweigh_batch(self, limit: int) -> tuple[str, list[tuple[int, str]]] | None:
        """Where the pass of weighing the words again stands (its watermark as read), and the
        (rowid, id) of the next ``limit`` memories past it; None when no pass is under way."""
        return self._db.read(partial(_reweigh_batch, limit=limit))

    def advance_reweigh(self, read: str, rowid: int) -> bool:
        """Move the pass's watermark from ``read`` (as the batch was read) to ``rowid``; False
        when a new pass started meanwhile (the watermark is no longer ``read``)."""
        _, separator, pass_id = read.partition("/")
        with self._db.transaction() as conn:
            moved = conn.execute(
                "UPDATE store_meta SET value = ? WHERE key = ? AND value = ?",
                (f"{rowid}{separator}{pass_id}", REWEIGH_THROUGH, read),
            ).rowcount
        return moved == 1

    def end_reweigh(self, read: str) -> None:
        """End the pass that reached the last memory from ``read`` (unless a new one started)."""
        with self._db.transaction() as conn:
            conn.execute("DELETE FROM store_meta WHERE key = ? AND value = ?", (REWEIGH_THROUGH, read))

    def drop_reweigh(self) -> None:
        """Forget a pass under way: a rebuild weighs every memory against the average it takes."""
        with self._db.transaction() as conn:
            conn.execute("DELETE FROM store_meta WHERE key = ?", (REWEIGH_THROUGH,))

    def reweigh_progress(self) -> WordsProgress | None:
        """(memories weighed again, memories in the store) while a pass runs, else None."""
        return self._db.read(partial(_progress, key=REWEIGH_THROUGH, only_under_way=True))


def begin_reweigh(conn: Connection) -> None:
    """Start a pass of weighing every memory's words again (in the caller's transaction, the one
    that writes the new average), or start it again from the first rowid."""
    keep(conn, REWEIGH_THROUGH, f"0/{uuid.uuid4().hex}")


def _marked(conn: Connection) -> bool:
    return conn.execute("SELECT 1 FROM store_meta WHERE key = ?", (WORDS_COMPLETE,)).fetchone() is not None


def _watermark(conn: Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM store_meta WHERE key = ?", (key,)).fetchone()
    return str(row[0]) if row else None


def _through(conn: Connection, key: str = WORDS_THROUGH) -> int | None:
    """The last rowid done by the build (``WORDS_THROUGH``) or the pass (``REWEIGH_THROUGH``)."""
    value = _watermark(conn, key)
    return None if value is None else _rowid(value)


def _rowid(value: str) -> int:
    """The rowid of a watermark (``rowid`` or ``rowid/pass``); one that does not parse (a damaged
    row) starts again from the first memory, which only writes the words again."""
    try:
        return int(value.partition("/")[0])
    except ValueError:
        return 0


def _reweigh_batch(conn: Connection, limit: int) -> tuple[str, list[tuple[int, str]]] | None:
    read = _watermark(conn, REWEIGH_THROUGH)
    return None if read is None else (read, _after(conn, _rowid(read), limit))


def _after(conn: Connection, through: int, limit: int) -> list[tuple[int, str]]:
    rows = conn.execute(
        "SELECT rowid, id FROM memories WHERE rowid > ? ORDER BY rowid LIMIT ?", (through, limit)
    )
    return [(int(rowid), str(memory_id)) for rowid, memory_id in rows]


def _progress(conn: Connection, key: str, only_under_way: bool = False) -> WordsProgress | None:
    through = _through(conn, key)
    if through is None and only_under_way:
        return None
    done, total = conn.execute(
        "SELECT count(*) FILTER (WHERE rowid <= ?), count(*) FROM memories", (through or 0,)
    ).fetchone()
    return int(done), int(total)
