"""The memories of the store: their rows, vectors, access counts, pages and counts."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import TypeVar

import numpy as np

from cognitive_memory.core.memory import CognitiveMemory, MemoryType, SourceKind, Vector, content_key
from cognitive_memory.core.ranking import RankingRow
from cognitive_memory.core.store.values import MemoryCounts
from cognitive_memory.core.uses import Use
from cognitive_memory.index.vector_store import VectorFilter
from cognitive_memory.storage import associations, browse, change_log, identifiers, ranking
from cognitive_memory.storage import relations as relation_sql
from cognitive_memory.storage import transfer as transfer_sql
from cognitive_memory.storage.browse import TextMatch
from cognitive_memory.storage.overview import Overview, overview_of
from cognitive_memory.storage.properties import note_activity
from cognitive_memory.storage.rows import MEMORY_COLUMNS, delete_memories, insert_memories, readable_memories
from cognitive_memory.storage.sql import Connection, DatabaseAccess
from cognitive_memory.storage.versions import check_unchanged, rewrite_memory

__all__ = ["SESSION_SCAN", "MemoryCounts", "Memories"]

# Under a metadata filter, or a session filter in an index made before the session was in its
# payload, the index is given the ids of at most this many of the memories that match (the latest).
SESSION_SCAN = 5_000

T = TypeVar("T")


class Memories:
    """The ``memories`` rows of one database, with what is written beside them in the same
    transaction (lexical entries, links in time, the vector outbox, activity)."""

    def __init__(self, database: DatabaseAccess, dimension: Callable[[], int | None]) -> None:
        self._db = database
        self._dimension = dimension
        self._unreadable: set[str] = set()  # ids of rows that could not be read, logged once

    def add(self, memories: Sequence[CognitiveMemory]) -> None:
        """Insert memories in one transaction: rows, lexical index, links in time, vector outbox."""
        now = datetime.now(UTC).timestamp()
        with self._db.transaction() as conn:
            insert_memories(conn, memories, now)
            note_activity(conn, "last_storage", now)

    def delete(self, ids: Sequence[str]) -> list[str]:
        """Delete memories with their links and lexical entries, queue their vector deletions,
        and re-index their neighbours in time. Returns the ids that existed."""
        with self._db.transaction() as conn:
            return delete_memories(conn, ids, datetime.now(UTC).timestamp())

    def rewrite(self, memory: CognitiveMemory, previous: CognitiveMemory, session_id: str | None) -> int:
        """Update a memory in place, keeping ``previous`` as a version (see ``versions.rewrite_memory``);
        returns that version's number. Refused (``EditConflictError``) if the stored memory is no
        longer ``previous``: compare and set in one transaction."""
        now = datetime.now(UTC).timestamp()
        with self._db.transaction() as conn:
            check_unchanged(conn, previous)
            version = rewrite_memory(conn, memory, previous, session_id, now)
            note_activity(conn, "last_storage", now)
        return version

    def write_import(
        self, write: transfer_sql.ImportWrite, session_id: str | None, *, dry_run: bool = False
    ) -> list[relation_sql.LinkWrite]:
        """Write an import in one transaction (``transfer.write_import``); a dry run rolls it back."""
        try:
            with self._db.transaction() as conn:
                return transfer_sql.write_import(conn, write, session_id, dry_run)
        except transfer_sql.RolledBack as rolled:
            return rolled.links

    def get(self, ids: Sequence[str]) -> list[CognitiveMemory]:
        """The memories with these ids, in the order given (unknown ids are skipped)."""
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = self._db.rows(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN ({marks})", ids)
        by_id = {memory.id: memory for memory in readable_memories(rows, self._unreadable)}
        return [by_id[i] for i in ids if i in by_id]

    def starting_with(self, prefix: str, limit: int = 2) -> list[str]:
        """Up to ``limit`` ids of memories that start with ``prefix`` (lower-case hex and '-')."""
        return self._db.read(lambda conn: identifiers.ids_starting_with(conn, "memories", prefix, limit))

    def unique_prefix_lengths(self, ids: Sequence[str]) -> dict[str, int]:
        """For each id, how many of its first characters no other memory's id starts with."""
        return self._db.read(lambda conn: identifiers.unique_prefix_lengths(conn, "memories", ids))

    def find_same_text(self, text: str, project: str) -> CognitiveMemory | None:
        """A memory of ``project`` whose text equals ``text`` up to whitespace and case."""
        rows = self._db.rows(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE content_key = ? AND project = ? "
            "ORDER BY rowid LIMIT 1",
            (content_key(text), project),
        )
        return next(iter(readable_memories(rows, self._unreadable)), None)

    def keyed(self, keys: Sequence[str], projects: Sequence[str]) -> list[CognitiveMemory]:
        """The memories of ``projects`` holding one of ``keys`` (at most one per key and project)."""
        if not keys or not projects:
            return []
        rows = self._db.rows(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE memory_key IN ({','.join('?' * len(keys))}) "
            f"AND project IN ({','.join('?' * len(projects))})",
            [*keys, *projects],
        )
        return readable_memories(rows, self._unreadable)

    def keyed_ids(self, key: str, projects: Sequence[str]) -> list[str]:
        """The ids of the memories holding ``key``, of ``projects`` (of every project: none), in
        the order they were stored: one per project at most."""
        scope = f" AND project IN ({','.join('?' * len(projects))})" if projects else ""
        found = f"SELECT id FROM memories WHERE memory_key = ?{scope} ORDER BY rowid"
        rows = self._db.rows(found, [key, *projects])
        return [str(row[0]) for row in rows]

    def change_key(self, memory_id: str, key: str | None) -> str | None:
        """Give a memory ``key`` in place of its own (None: no key), and its words with it (its
        vector's write queued); returns the id of the other memory of its project that holds
        ``key`` (and changes nothing then), else None."""
        with self._db.transaction() as conn:
            holder = conn.execute(
                "SELECT id FROM memories WHERE memory_key = ? AND id != ? AND project = "
                "(SELECT project FROM memories WHERE id = ?)",
                (key, memory_id, memory_id),
            ).fetchone()
            if holder:
                return str(holder[0])
            conn.execute("UPDATE memories SET memory_key = ? WHERE id = ?", (key, memory_id))
            associations.index_memory(conn, memory_id)
            return None

    def set_key(self, memory_id: str, key: str) -> bool:
        """Give a memory without a key ``key``, and its words with it (its vector's write queued);
        False when it has one, or another memory of its project holds ``key`` (the unique index
        refuses it)."""
        with self._db.transaction() as conn:
            taken = conn.execute(
                "SELECT 1 FROM memories WHERE memory_key = ? AND project = "
                "(SELECT project FROM memories WHERE id = ?)",
                (key, memory_id),
            ).fetchone()
            if taken:
                return False
            done = conn.execute(
                "UPDATE memories SET memory_key = ? WHERE id = ? AND memory_key IS NULL", (key, memory_id)
            )
            if done.rowcount != 1:
                return False
            associations.index_memory(conn, memory_id)
            return True

    def latest_matching(self, where: VectorFilter, limit: int) -> list[str]:
        """The ids of the latest ``limit`` memories matching ``where`` (sessions included)."""

        def latest(conn: Connection) -> list[str]:
            condition, params = browse.filter_sql(where, conn.dialect)
            found = f"SELECT id FROM memories WHERE {condition} ORDER BY timestamp DESC LIMIT ?"
            return [row[0] for row in conn.execute(found, [*params, limit])]

        return self._db.read(latest)

    def batches(self, batch_size: int = 500) -> Iterator[list[CognitiveMemory]]:
        """Every memory, in batches of ``batch_size`` in insertion order (one short read per batch)."""
        last_rowid = 0
        while True:
            rows = self._db.rows(
                f"SELECT {MEMORY_COLUMNS}, rowid FROM memories WHERE rowid > ? ORDER BY rowid LIMIT ?",
                (last_rowid, batch_size),
            )
            if not rows:
                return
            yield readable_memories(rows, self._unreadable)
            last_rowid = rows[-1][-1]

    def browse(
        self,
        where: VectorFilter,
        order_by: str,
        limit: int,
        cursor: str | None = None,
        text: browse.TextMatch | None = None,
    ) -> browse.MemoryPage:
        """A page of the memories matching ``where`` (and ``text``), highest ``order_by`` first (a
        key of ``browse.ORDER_COLUMNS``), starting after the key ``cursor`` holds (see
        ``browse.page_rows``; refused, ``invalid_cursor``, unless ``browse.PageKey.cursor`` made it
        for ``order_by``)."""
        after = browse.page_key(cursor, order_by) if cursor is not None else None
        page = self._db.read(
            lambda conn: browse.page_rows(conn, MEMORY_COLUMNS, where, order_by, limit, after, text)
        )
        next_cursor = page.next_key.cursor(order_by) if page.next_key else None
        return browse.MemoryPage(readable_memories(page.rows, self._unreadable), page.total, next_cursor)

    def overview(self, where: VectorFilter, text: TextMatch | None, size: int) -> Overview:
        """The tags in use and the sessions of the memories matching ``where`` (and ``text``), at
        most ``size`` of each named (``storage/overview.py``): two statements in one read."""
        return self._db.read(lambda conn: overview_of(conn, where, text, size))

    def ranking_rows(self, ids: Sequence[str]) -> list[RankingRow]:
        """The few fields ranking needs, for many candidates at once (``storage/ranking.py``)."""
        dimension = self._dimension()
        return self._db.read(lambda conn: ranking.ranking_rows(conn, ids, dimension))

    def every_ranking_row(self, take: Callable[[int, Iterator[RankingRow]], T]) -> T:
        """What ``take`` makes of the change log's head and every memory's ranking row (in the
        order they were stored, read as it takes them), both in one read apart from the others
        (``DatabaseAccess.read_apart``): recalls do not wait for it."""
        dimension = self._dimension()
        return self._db.read_apart(
            lambda conn: take(change_log.head_in(conn), ranking.every_ranking_row(conn, dimension))
        )

    def vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        """The stored vectors of these ids (a vector of another size, or not made of 32-bit
        floats, is left out: ``memory_system doctor`` names its memory)."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        dimension = self._dimension()
        size = "length(embedding) = ?" if dimension else "length(embedding) % 4 = 0"
        rows = self._db.read(
            lambda conn: conn.execute(
                f"SELECT id, embedding FROM memories WHERE id IN ({marks}) "
                f"AND {conn.dialect.holds_bytes('embedding')} AND {size}",
                [*ids, *([4 * dimension] if dimension else [])],
            ).fetchall()
        )
        return {row[0]: np.frombuffer(row[1], dtype="<f4").astype(np.float32) for row in rows}

    def record_uses(self, uses: Sequence[Use]) -> None:
        """Write ``uses`` in one transaction, in order, each as if on its own: one access for each
        of its ``used`` ids (the last access its ``at``), and its co-recall links strengthened at
        its ``stamp`` (see ``Links.strengthen``)."""
        if not uses:
            return
        with self._db.transaction() as conn:
            for use in uses:
                stamp = use.at.timestamp()
                conn.executemany(
                    "UPDATE memories SET access_count = access_count + 1, last_accessed = ? WHERE id = ?",
                    [(stamp, i) for i in use.used],
                )
                if pairs := use.pairs():
                    associations.strengthen(conn, pairs, use.stamp)
            last = uses[-1].at.timestamp()
            note_activity(conn, "last_retrieval", last)

    def index_filter(
        self,
        where: VectorFilter | None,
        *,
        sessions_in_index: bool = False,
        only_in: Callable[[Sequence[str]], bool] | None = None,
    ) -> VectorFilter | None:
        """``where`` as the vector index needs it. Under a metadata filter, or a session filter
        when the index does not hold the sessions (``sessions_in_index``: see
        ``VectorStore.has_sessions``), the ids of the latest SESSION_SCAN memories that match it
        (none when no memory matches). Else None when it names only projects and every memory is
        in one of them (one user's store, asked of ``only_in``, by default this table's), since
        Qdrant checks a filter at every point a search visits, even one every point passes."""
        if where is None or where.is_empty():
            return None
        if self.needs_ids(where, sessions_in_index=sessions_in_index):
            return VectorFilter(ids=tuple(self.latest_matching(where, SESSION_SCAN)))
        if where.conditions().keys() == {"project"} and not where.has_range:
            return None if (only_in or self.only_in)(where.projects) else where
        return where

    @staticmethod
    def needs_ids(where: VectorFilter | None, *, sessions_in_index: bool = False) -> bool:
        """Whether ``index_filter`` lists the ids of the memories ``where`` matches (a read of
        the store that nothing kept in memory answers)."""
        return where is not None and bool(where.metadata or (where.sessions and not sessions_in_index))

    def only_in(self, projects: Sequence[str]) -> bool:
        """True when every memory belongs to one of ``projects``: a probe of the project index
        below, between and above them (each stops at the first row), never a scan."""
        bounds = sorted(set(projects))
        if not bounds:
            return False
        gaps: list[tuple[str, tuple[str, ...]]] = [
            ("project < ?", (bounds[0],)),
            ("project > ?", (bounds[-1],)),
        ]
        gaps += [("project > ? AND project < ?", pair) for pair in zip(bounds, bounds[1:], strict=False)]
        probe = " UNION ALL ".join(
            f"SELECT 1 FROM (SELECT 1 FROM memories WHERE {gap} LIMIT 1) AS gap{n}"
            for n, (gap, _) in enumerate(gaps)
        )
        return not self._db.rows(probe, [value for _, values in gaps for value in values])

    def counts(self) -> MemoryCounts:
        """How many memories there are, by level, type and project."""
        rows = self._db.rows(
            "SELECT hierarchy_level, memory_type, loader_type = ?, COUNT(*) FROM memories GROUP BY 1, 2, 3",
            (SourceKind.SESSION_LESSON.value,),
        )
        by_level = dict.fromkeys(range(3), 0)
        by_type = {kind.value: 0 for kind in MemoryType}
        lessons = 0
        for level, kind, is_lesson, n in rows:
            by_level[level] += n
            by_type[kind] += n
            lessons += n if is_lesson else 0
        projects = self._db.rows("SELECT project, COUNT(*) FROM memories GROUP BY project ORDER BY 2 DESC")
        return MemoryCounts(sum(by_level.values()), by_level, by_type, lessons, dict(projects))
