"""The change log: which memories changed, in the order their writes committed.

Every write of a memory's row, its links or its words appends ``(seq, memory_id, kind)`` to
``change_log`` in the write's own transaction (migration 0019's triggers), ``seq`` growing with
each row. A reader that follows the store keeps the last ``seq`` it has seen and asks for what
came after it (``since``): two index lookups when nothing changed, the changed ids otherwise. The
log keeps its newest ``KEEP`` rows (``trim``); a reader whose last ``seq`` is older than what was
trimmed, or newer than the log (a database put back from a backup), learns it (``Changes.whole``)
and reads the store whole instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from cognitive_memory.core.store.values import Change, ChangeKind, Changes
from cognitive_memory.storage import properties
from cognitive_memory.storage.own_changes import OwnChanges
from cognitive_memory.storage.sql import EVERY_ROW, Connection, DatabaseAccess

__all__ = ["KEEP", "Change", "ChangeKind", "ChangeLog", "Changes", "head_in"]

# How many rows the log keeps: a reader that falls further behind reads the store whole.
KEEP = 200_000
_TRIMMED = "change_log_trimmed"  # store_meta: the last seq trimmed away


class _Read(NamedTuple):
    """The log as one read of the store saw it after ``start``: its rows, and its bounds."""

    snapshot: int
    start: int
    changes: Sequence[Change]
    last: int
    trimmed: int

    def since(self, seq: int) -> Changes:
        changes = self.changes if seq <= self.start else [c for c in self.changes if c.seq > seq]
        head = changes[-1].seq if changes else self.last
        return Changes(changes, head, seq < self.trimmed or seq > self.last)


class ChangeLog:
    """The ``change_log`` rows of one database. Inside one read of the store (a snapshot), the
    log is read once: the readers that follow it (``replicas``) each ask what came after their own
    last ``seq``, and all but the first are answered from what the first read."""

    def __init__(self, database: DatabaseAccess, own: OwnChanges | None = None) -> None:
        """``own``: the rows the store object's writes append (its database's ``own_changes``)."""
        self._db = database
        self._own = own or OwnChanges()
        self._read: _Read | None = None

    def ours(self, seq: int) -> bool:
        """Whether change ``seq`` was written through this store object (``OwnChanges``)."""
        return self._own.ours(seq)

    def head(self) -> int:
        """The seq of the last change written (0 before any): one point read."""
        return self._db.read(head_in)

    def since(self, seq: int, limit: int | None = None) -> Changes:
        """The changes after ``seq`` (the first ``limit`` of them, if given), in one read."""
        snapshot = self._db.snapshot()
        kept = self._read
        if limit is None and snapshot is not None:
            if kept is not None and kept.snapshot == snapshot and kept.start <= seq:
                return kept.since(seq)
            kept = self._read = self._db.read(lambda conn: _Read(snapshot, seq, *_rows(conn, seq, None)))
            return kept.since(seq)
        return self._db.read(lambda conn: _since(conn, seq, limit))

    def trim(self, keep: int = KEEP) -> int:
        """Drop all but the newest ``keep`` rows once the log holds a tenth more than that (so a
        trim is one write now and then, and a look otherwise); how many went. Readers that had not
        read them learn it from ``since`` (``whole``)."""
        if keep < 1:  # the newest row stays: a new row's seq is the largest + 1
            raise ValueError(f"the change log keeps at least its newest row, not {keep}")
        head, trimmed = self._db.read(_bounds)
        if head - trimmed <= keep + keep // 10:
            return 0
        with self._db.transaction() as conn:
            head, trimmed = _bounds(conn)
            through = head - keep
            if through <= trimmed:
                return 0
            dropped = conn.execute("DELETE FROM change_log WHERE seq <= ?", (through,)).rowcount
            properties.keep(conn, _TRIMMED, str(through))
            return int(dropped)


def _since(conn: Connection, seq: int, limit: int | None) -> Changes:
    changes, last, trimmed = _rows(conn, seq, limit)
    head = changes[-1].seq if changes else last
    return Changes(changes, head, seq < trimmed or seq > last)


def _rows(conn: Connection, seq: int, limit: int | None) -> tuple[list[Change], int, int]:
    """(the changes after ``seq``, the first ``limit`` of them; the last seq written; the last
    trimmed away)."""
    rows = conn.execute(
        "SELECT seq, memory_id, kind FROM change_log WHERE seq > ? ORDER BY seq LIMIT ?",
        (seq, EVERY_ROW if limit is None else limit),
    ).fetchall()
    return [Change(int(row[0]), str(row[1]), row[2]) for row in rows], *_bounds(conn)


def head_in(conn: Connection) -> int:
    """The last seq written: the newest row's, else the last trimmed away, else 0."""
    return _bounds(conn)[0]


def _bounds(conn: Connection) -> tuple[int, int]:
    """(the last seq written, the last seq trimmed away), in one statement."""
    newest, trimmed = conn.execute(
        "SELECT (SELECT max(seq) FROM change_log), (SELECT value FROM store_meta WHERE key = ?)",
        (_TRIMMED,),
    ).fetchone()
    through = int(trimmed) if trimmed is not None else 0
    return (int(newest) if newest is not None else through), through
