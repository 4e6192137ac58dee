"""Whether the vector index holds every memory's words, and how far their build has come.

A store made before the words were indexed (its points carry only the meaning) gets them built
in the background (``cognitive_memory/words_upgrade.py``), in the order of the memories' rowids;
``store_meta`` keeps the last rowid done (``WORDS_THROUGH``), so a restarted build resumes there,
and, once every memory's words are in the index, the marker ``WORDS_COMPLETE``. A new store has
the marker from its first migration on (``0017_words_indexed``), and a rebuild of the index from
SQLite sets it. A memory stored after the build began is written with its words: the build only
has to reach the rowids that existed before.
"""

from __future__ import annotations

import sqlite3
import threading
import time

from cognitive_memory.storage.database import Database

__all__ = ["WORDS_COMPLETE", "WORDS_THROUGH", "IndexedWords", "WordsProgress"]

WORDS_COMPLETE = "words_indexed"
WORDS_THROUGH = "words_indexed_through"
# A process that did not build the words itself looks for the marker again after this many
# seconds (another process, the index's owner, builds them): recall does not read it each time.
RECHECK_SECONDS = 5.0

WordsProgress = tuple[int, int]  # (memories whose words are built, memories in the store)


class IndexedWords:
    """The marker and the watermark of the words' build, in ``store_meta``."""

    def __init__(self, database: Database, recheck_seconds: float = RECHECK_SECONDS) -> None:
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
            conn.execute("INSERT OR REPLACE INTO store_meta (key, value) VALUES (?, '1')", (WORDS_COMPLETE,))
            conn.execute("DELETE FROM store_meta WHERE key = ?", (WORDS_THROUGH,))
        self._complete = True

    def next_batch(self, limit: int) -> list[tuple[int, str]]:
        """The (rowid, id) of the first ``limit`` memories past the watermark, in rowid order
        (none once the marker is there: another process may have set it)."""
        return self._db.read(lambda conn: [] if _marked(conn) else _after(conn, _through(conn), limit))

    def advance(self, rowid: int) -> None:
        """Move the watermark to ``rowid`` (never back: two builders may run, one per process)."""
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE "
                "SET value = max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))",
                (WORDS_THROUGH, str(rowid)),
            )

    def progress(self) -> WordsProgress | None:
        """(memories whose words are built, memories in the store), or None when complete."""
        if self.complete():
            return None
        return self._db.read(_progress)


def _marked(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM store_meta WHERE key = ?", (WORDS_COMPLETE,)).fetchone() is not None


def _through(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM store_meta WHERE key = ?", (WORDS_THROUGH,)).fetchone()
    return int(row[0]) if row else 0


def _after(conn: sqlite3.Connection, through: int, limit: int) -> list[tuple[int, str]]:
    rows = conn.execute(
        "SELECT rowid, id FROM memories WHERE rowid > ? ORDER BY rowid LIMIT ?", (through, limit)
    )
    return [(int(rowid), str(memory_id)) for rowid, memory_id in rows]


def _progress(conn: sqlite3.Connection) -> WordsProgress:
    through = _through(conn)
    done, total = conn.execute(
        "SELECT count(*) FILTER (WHERE rowid <= ?), count(*) FROM memories", (through,)
    ).fetchone()
    return int(done), int(total)
