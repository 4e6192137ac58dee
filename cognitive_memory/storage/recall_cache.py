"""What recall reads of its candidates, kept between recalls: their ranking rows and link lists.

A recall reads the light rows of about a hundred candidates and the links of each (about 1,300
rows on a lived-in store); most of them were read by the recalls before it. This process keeps
both, by memory id, up to ``CAPACITY`` of each (the least recently used go first), and knows what
changed from the database itself: triggers on ``memories``, ``memory_words``, ``connections`` and
``relations`` append the id of every memory whose row, words or links a write touches to
``recall_changes`` (migration ``0018_recall_changes``), whichever process or path wrote it (a store,
an edit, the bookkeeping after a recall, a link, an import, a prune, a cascade of a delete).

Each read transaction of the reading connection first reads the changes after the last one this
cache saw, and forgets those ids; what it then reads is of the same snapshot, so an entry is never
older than the snapshot it is served in. Reads inside a write transaction bypass the cache (they
may see uncommitted changes). The log keeps its last ``KEPT`` changes (``prune``, run before each
commit); a cache that finds its place pruned away forgets everything.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Generic, TypeVar

from cognitive_memory.storage.ranking import RankingRow

__all__ = ["CAPACITY", "KEPT", "CachedReads", "LinkLists", "prune"]

# A memory's linked memories with the strongest weight, with and without links in time.
LinkLists = tuple[list[tuple[str, float]], list[tuple[str, float]]]

# Entries kept of each kind (ranking rows, link lists): about 5 KB a row with its embedding and
# terms, 1.5 KB a link list (docs/performance.md).
CAPACITY = 4_096
# Changes the log keeps; a cache further behind forgets everything.
KEPT = 20_000

V = TypeVar("V")


class _Entries(Generic[V]):
    """One kind of entry, least recently used first."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._entries: OrderedDict[str, V] = OrderedDict()

    def get(self, key: str) -> V | None:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: str, value: V) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self._capacity:
            self._entries.popitem(last=False)

    def forget(self, keys: Iterable[str]) -> None:
        for key in keys:
            self._entries.pop(key, None)

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


class CachedReads:
    """The ranking rows and link lists of one database, as its reads last found them (see the
    module docstring). ``reading(conn)`` says whether ``conn`` is in a read transaction of the
    reading connection, and which: the cache serves only those."""

    def __init__(self, reading: Callable[[sqlite3.Connection], int | None], capacity: int = CAPACITY) -> None:
        self._reading = reading
        self._lock = threading.Lock()
        self._seen: int | None = None  # the last change forgotten
        self._synced: int | None = None  # the read transaction that last looked
        self.rows: _Entries[RankingRow] = _Entries(capacity)
        self.links: _Entries[LinkLists] = _Entries(capacity)

    def read(
        self,
        conn: sqlite3.Connection,
        entries: _Entries[V],
        ids: Sequence[str],
        load: Callable[[list[str]], dict[str, V]],
    ) -> dict[str, V]:
        """Each of ``ids`` with its entry: kept ones as kept, the others from ``load(missing)``
        (which returns an entry for each id it knows) and kept from now on."""
        transaction = self._reading(conn)
        if transaction is None:
            return load(list(dict.fromkeys(ids)))
        with self._lock:
            self._look(conn, transaction)
            found: dict[str, V] = {}
            missing = []
            for memory_id in dict.fromkeys(ids):
                value = entries.get(memory_id)
                if value is None:
                    missing.append(memory_id)
                else:
                    found[memory_id] = value
            if missing:
                loaded = load(missing)
                for memory_id, value in loaded.items():
                    entries.put(memory_id, value)
                found |= loaded
            return found

    def _look(self, conn: sqlite3.Connection, transaction: int) -> None:
        """Forget what changed since the last look (once per read transaction)."""
        if transaction == self._synced:
            return
        self._synced = transaction
        oldest, last = conn.execute(
            "SELECT (SELECT min(seq) FROM recall_changes), (SELECT max(seq) FROM recall_changes)"
        ).fetchone()
        last = last or 0
        if (
            self._seen is None
            or last < self._seen
            or (last > self._seen and (oldest is None or oldest > self._seen + 1))
        ):
            # The first look; another database file; or the changes since the last are pruned.
            self.rows.clear()
            self.links.clear()
        elif last > self._seen:
            changed = [
                memory_id
                for (memory_id,) in conn.execute(
                    "SELECT DISTINCT memory_id FROM recall_changes WHERE seq > ?", (self._seen,)
                )
            ]
            self.rows.forget(changed)
            self.links.forget(changed)
        self._seen = last


def prune(conn: sqlite3.Connection) -> None:
    """Keep the last ``KEPT`` changes of the log (in the caller's write transaction)."""
    conn.execute(
        "DELETE FROM recall_changes WHERE seq <= (SELECT max(seq) FROM recall_changes) - ?",
        (KEPT,),
    )
