"""SQLite, the source of truth: every memory with its vector, the vector outbox, activity."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from cognitive_memory.core.memory import CognitiveMemory, MemoryType, Vector, content_key
from cognitive_memory.errors import StorageError
from cognitive_memory.index.vector_store import VectorFilter
from cognitive_memory.storage import associations, browse, consolidation, damaged, lexical, ranking
from cognitive_memory.storage import relations as relation_sql
from cognitive_memory.storage import sources as source_sql
from cognitive_memory.storage import transfer as transfer_sql
from cognitive_memory.storage import words as word_sql
from cognitive_memory.storage.connection import connect
from cognitive_memory.storage.file_identity import FileIdentity
from cognitive_memory.storage.migrations import apply_migrations
from cognitive_memory.storage.ranking import RankingRow
from cognitive_memory.storage.rows import (
    MEMORY_COLUMNS,
    delete_memories,
    fill_content_keys,
    insert_memories,
    queue_vector_writes,
    readable_memories,
)
from cognitive_memory.storage.trash import TrashBin
from cognitive_memory.storage.versions import check_unchanged, rewrite_memory

__all__ = ["CONTEXT_WEIGHT", "MemoryCounts", "SQLiteMemoryStore"]

# BM25 weight of a memory's temporal context (its neighbours' words) against its own words.
CONTEXT_WEIGHT = 0.3


@dataclass(frozen=True, slots=True)
class MemoryCounts:
    """How many memories there are, by level, by type, and how many are session lessons."""

    total: int
    by_level: dict[int, int]
    by_type: dict[str, int]
    session_lessons: int
    by_project: dict[str, int] = field(default_factory=dict)


class SQLiteMemoryStore:
    """Memories and their vectors in one SQLite file (WAL mode, FULL sync: a commit is durable)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = connect(path)
            apply_migrations(self._conn)
            fill_content_keys(self._conn)
            word_sql.prepare(self._conn)
        except (sqlite3.Error, OSError) as exc:
            raise StorageError(f"Cannot open the memory database {path}: {exc}") from exc
        self._lock = threading.RLock()
        self._term_counts = word_sql.TermCounts()
        self._vector_size: int | None = None
        self._unreadable: set[str] = set()  # ids of rows that could not be read, logged once
        self.location = FileIdentity(path)  # checked around every write: see file_identity

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self.location.check()
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self._conn
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise StorageError(f"The memory database {self.path} refused a write: {exc}") from exc
            self.location.check()  # deleted during the write: say so rather than acknowledge it

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise StorageError(f"The memory database {self.path} failed a read: {exc}") from exc

    def add(self, memories: Sequence[CognitiveMemory]) -> None:
        """Insert memories in one transaction: rows, lexical index, links in time, vector outbox."""
        now = datetime.now(UTC).timestamp()
        with self._transaction() as conn:
            insert_memories(conn, memories, now)
            conn.execute("INSERT OR REPLACE INTO activity (name, at) VALUES ('last_storage', ?)", (now,))

    def delete(self, ids: Sequence[str]) -> list[str]:
        """Delete memories with their links and lexical entries, queue their vector deletions,
        and re-index their neighbours in time. Returns the ids that existed."""
        with self._transaction() as conn:
            return delete_memories(conn, ids, datetime.now(UTC).timestamp())

    @property
    def trash(self) -> TrashBin:
        """Forgotten and pruned memories, restorable until purged (``storage/trash.py``)."""
        return TrashBin(self._transaction)

    @property
    def duplicates(self) -> consolidation.DuplicateMerge:
        return consolidation.DuplicateMerge(self._transaction, self._dimension())

    def rewrite(self, memory: CognitiveMemory, previous: CognitiveMemory, session_id: str | None) -> int:
        """Update a memory in place, keeping ``previous`` as a version (see ``versions.rewrite_memory``);
        returns that version's number. Refused (``EditConflictError``) if the stored memory is no
        longer ``previous``: compare and set in one transaction."""
        now = datetime.now(UTC).timestamp()
        with self._transaction() as conn:
            check_unchanged(conn, previous)
            version = rewrite_memory(conn, memory, previous, session_id, now)
            conn.execute("INSERT OR REPLACE INTO activity (name, at) VALUES ('last_storage', ?)", (now,))
        return version

    def write_sources(self, writes: Sequence[source_sql.SourceWrite]) -> None:
        """Apply loader syncs in one transaction: a reader sees each source before or after, never
        half-replaced. Vector writes (new and rewritten upserts, deletions) go to the outbox."""
        now = datetime.now(UTC).timestamp()
        with self._transaction() as conn:
            for write in writes:
                delete_memories(conn, write.removed, now)
                insert_memories(conn, write.added, now)
                rewritten = source_sql.write_source(conn, write, now)
                for memory_id in rewritten:
                    associations.index_memory(conn, memory_id)
                queue_vector_writes(conn, rewritten, "upsert", now)
            source_sql.resolve_links(conn, now)
            if any(write.added or write.rewritten for write in writes):
                conn.execute("INSERT OR REPLACE INTO activity (name, at) VALUES ('last_storage', ?)", (now,))

    def forget_sources(self, keys: Sequence[str]) -> list[str]:
        """Delete loaded sources and all their memories; returns the memory ids removed."""
        now = datetime.now(UTC).timestamp()
        removed: list[str] = []
        with self._transaction() as conn:
            for key in keys:
                ids = [chunk.memory_id for chunk in source_sql.chunks_of(conn, key)]
                removed += delete_memories(conn, ids, now)
                source_sql.forget_source(conn, key)
        return removed

    def source_chunks(self, key: str) -> list[source_sql.ChunkRow]:
        """The chunks a source holds, in order."""
        with self._lock:
            return source_sql.chunks_of(self._conn, key)

    def sources(self, loader_type: str, prefix: str = "") -> list[source_sql.SourceRecord]:
        """Loaded sources of ``loader_type`` whose key starts with ``prefix``."""
        with self._lock:
            return source_sql.sources_under(self._conn, loader_type, prefix)

    def source_digests(self, key: str) -> list[str]:
        """The per-item digests a loader keeps for a source (one per commit, say), oldest first."""
        with self._lock:
            return source_sql.digests_of(self._conn, key)

    def save_source_digests(
        self, key: str, items: Sequence[tuple[str, str]], *, replace: bool = False
    ) -> None:
        """Append ``(item_key, data)`` digests to a source's, or replace them all, in one transaction."""
        with self._transaction() as conn:
            source_sql.save_digests(conn, key, items, replace)

    def get(self, ids: Sequence[str]) -> list[CognitiveMemory]:
        """The memories with these ids, in the order given (unknown ids are skipped)."""
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = self._query(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN ({marks})", ids)
        by_id = {memory.id: memory for memory in readable_memories(rows, self._unreadable)}
        return [by_id[i] for i in ids if i in by_id]

    def find_same_text(self, text: str, project: str) -> CognitiveMemory | None:
        """A memory of ``project`` whose text equals ``text`` up to whitespace and case."""
        rows = self._query(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE content_key = ? AND project = ? "
            "ORDER BY rowid LIMIT 1",
            (content_key(text), project),
        )
        return next(iter(readable_memories(rows, self._unreadable)), None)

    def list_memories(
        self, where: VectorFilter, order_by: str, limit: int, after: browse.PageKey | None = None
    ) -> browse.MemoryPage:
        """A page of the memories matching ``where``, highest ``order_by`` first (a key of
        ``browse.ORDER_COLUMNS``), starting after ``after`` (see ``browse.page_rows``)."""
        with self._lock:
            try:
                page = browse.page_rows(self._conn, MEMORY_COLUMNS, where, order_by, limit, after)
            except sqlite3.Error as exc:
                raise StorageError(f"The memory database {self.path} failed a read: {exc}") from exc
        return browse.MemoryPage(readable_memories(page.rows, self._unreadable), page.total, page.next_key)

    def versions(self, ids: Sequence[str]) -> dict[str, list[browse.VersionRow]]:
        """The earlier versions of each of ``ids`` that was updated, oldest first."""
        with self._lock:
            try:
                return browse.versions_of(self._conn, ids)
            except sqlite3.Error as exc:
                raise StorageError(f"The memory database {self.path} failed a read: {exc}") from exc

    def ranking_rows(self, ids: Sequence[str]) -> list[RankingRow]:
        """The few fields ranking needs, for many candidates at once (``storage/ranking.py``)."""
        with self._lock:
            try:
                return ranking.ranking_rows(self._conn, ids, self._dimension())
            except sqlite3.Error as exc:
                raise StorageError(f"The memory database {self.path} failed a read: {exc}") from exc

    def _dimension(self) -> int | None:
        """The size of the vectors of the encoder the store records (``name:dimension``), if any."""
        if self._vector_size is None:
            recorded = self.meta("encoder") or ""
            size = recorded.rpartition(":")[2]
            self._vector_size = int(size) if size.isdigit() else None
        return self._vector_size

    def iter_memories(self, batch_size: int = 500) -> Iterator[list[CognitiveMemory]]:
        """Every memory, in batches of ``batch_size`` in insertion order (one short read per batch)."""
        last_rowid = 0
        while True:
            rows = self._query(
                f"SELECT {MEMORY_COLUMNS}, rowid FROM memories WHERE rowid > ? ORDER BY rowid LIMIT ?",
                (last_rowid, batch_size),
            )
            if not rows:
                return
            yield readable_memories(rows, self._unreadable)
            last_rowid = rows[-1][-1]

    def vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        """The stored vectors of these ids (a vector of another size, or not made of 32-bit
        floats, is left out: ``memory_system doctor`` names its memory)."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        dimension = self._dimension()
        size = "length(embedding) = ?" if dimension else "length(embedding) % 4 = 0"
        rows = self._query(
            f"SELECT id, embedding FROM memories WHERE id IN ({marks}) AND typeof(embedding) = 'blob' "
            f"AND {size}",
            [*ids, *([4 * dimension] if dimension else [])],
        )
        return {row[0]: np.frombuffer(row[1], dtype="<f4").astype(np.float32) for row in rows}

    def lexical_search(self, text: str, limit: int) -> list[tuple[str, float]]:
        """BM25 over content (weight 1) and temporal context (weight 0.3), best first; its cost
        stays bounded in a large store (``storage/lexical.py``)."""
        with self._lock:
            try:
                return lexical.search(self._conn, text, limit, CONTEXT_WEIGHT)
            except sqlite3.Error as exc:
                raise StorageError(f"The memory database {self.path} failed a read: {exc}") from exc

    def lexical_rows(self) -> int:
        """How many memories the lexical index holds (a point read of FTS5's own count)."""
        with self._lock:
            try:
                return word_sql.row_total(self._conn)
            except sqlite3.Error as exc:
                raise StorageError(f"The memory database {self.path} failed a read: {exc}") from exc

    def word_shares(self, query: str, rows: Sequence[RankingRow]) -> dict[str, float]:
        """Each memory's share of the query's words, weighted by rarity (``storage/words.py``);
        memories holding none of them are left out."""
        with self._lock:
            try:
                missing = [row for row in rows if row.terms is None]
                found = word_sql.terms_of(self._conn, [row.content for row in missing])
                terms = {row.id: row.terms for row in rows if row.terms is not None}
                terms |= {row.id: held for row, held in zip(missing, found, strict=True)}
                words = associations.query_words(query)
                return word_sql.word_shares(self._conn, words, terms, self._term_counts)
            except sqlite3.Error as exc:
                raise StorageError(f"The memory database {self.path} failed a read: {exc}") from exc

    def neighbours(self, ids: Sequence[str]) -> dict[str, list[tuple[str, float]]]:
        """Each id's connected memories with the strongest weight over edge kinds; a user link
        (``relations``) is an edge of weight USER_LINK_WEIGHT in both directions."""
        return self.neighbourhood(ids)[0]

    def neighbourhood(self, ids: Sequence[str]) -> tuple[associations.Graph, associations.Graph]:
        """``neighbours`` and, beside it, the same graph without links in time (the strongest
        weight over the other kinds; pairs linked only in time are left out)."""
        with self._lock:
            try:
                return associations.neighbourhood(self._conn, ids, relation_sql.USER_LINK_WEIGHT)
            except sqlite3.Error as exc:
                raise StorageError(f"The memory database {self.path} failed a read: {exc}") from exc

    def answers(self, ids: Sequence[str]) -> dict[str, str]:
        """For each of ``ids`` that is a conversation turn asking a question (it has a recorded
        speaker and holds a '?'), the turn stored right after it in its session (its neighbour in
        time with the next rowid, itself a turn). Notes are never questions here."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self._query(
            "SELECT c.source_id, c.target_id FROM connections c "
            "JOIN memories q ON q.id = c.source_id JOIN memories a ON a.id = c.target_id "
            f"WHERE c.source_id IN ({marks}) AND c.kind = 'temporal' AND a.rowid > q.rowid "
            "AND instr(q.content, '?') > 0 "
            "AND CASE WHEN json_valid(q.metadata) THEN json_extract(q.metadata, '$.speaker') END IS NOT NULL "
            "AND CASE WHEN json_valid(a.metadata) THEN json_extract(a.metadata, '$.speaker') END IS NOT NULL "
            "ORDER BY a.rowid DESC",
            ids,
        )
        # Later rows win: the nearest successor (smallest rowid) comes last.
        return {str(question): str(answer) for question, answer in rows}

    def link(
        self, link: tuple[str, str, str], note: str | None, session_id: str | None
    ) -> relation_sql.LinkWrite:
        """Add the user link ``(from_id, to_id, relation)`` in one transaction, unless an id is
        missing or it would close a supersedes cycle (see ``relations.insert_link``)."""
        with self._transaction() as conn:
            return relation_sql.insert_link(conn, link, note, session_id, datetime.now(UTC).timestamp())

    def links_from(self, ids: Sequence[str]) -> dict[str, list[transfer_sql.LinkRow]]:
        """The user links starting at each of ``ids`` (for export)."""
        with self._lock:
            return transfer_sql.links_from(self._conn, ids)

    def write_import(
        self, write: transfer_sql.ImportWrite, session_id: str | None, *, dry_run: bool = False
    ) -> list[relation_sql.LinkWrite]:
        """Write an import in one transaction (``transfer.write_import``); a dry run rolls it back."""
        try:
            with self._transaction() as conn:
                return transfer_sql.write_import(conn, write, session_id, dry_run)
        except transfer_sql.RolledBack as rolled:
            return rolled.links

    def unlink(self, from_id: str, to_id: str, relation: str | None = None) -> list[str]:
        """Remove the user links from ``from_id`` to ``to_id`` (of ``relation`` only, if given);
        returns the relations removed."""
        with self._transaction() as conn:
            return relation_sql.remove_links(conn, from_id, to_id, relation)

    def superseded_by(self, ids: Sequence[str]) -> dict[str, list[str]]:
        """For each of ``ids`` that other memories supersede, their ids (oldest link first)."""
        with self._lock:
            try:
                return relation_sql.superseded_by(self._conn, ids)
            except sqlite3.Error as exc:
                raise StorageError(f"The memory database {self.path} failed a read: {exc}") from exc

    def related(
        self, start: str, depth: int, relations: Sequence[str], limit: int
    ) -> relation_sql.Neighbourhood:
        """The memories linked to ``start`` within ``depth`` hops, breadth first, at most ``limit``."""
        with self._lock:
            try:
                return relation_sql.walk(self._conn, start, depth, relations, limit)
            except sqlite3.Error as exc:
                raise StorageError(f"The memory database {self.path} failed a read: {exc}") from exc

    def connect(self, edges: Sequence[tuple[str, str, float]], kind: str) -> None:
        """Add undirected edges of ``kind`` (an existing edge keeps the larger weight)."""
        if edges:
            with self._transaction() as conn:
                associations.connect(conn, edges, kind, datetime.now(UTC).timestamp())

    def strengthen(
        self,
        pairs: Sequence[tuple[str, str]],
        step: float = associations.CO_RECALL_STEP,
        keep: int = associations.CO_RECALL_LINKS,
    ) -> None:
        """Strengthen co-recall edges between memories recalled together; each keeps its ``keep``
        most recently strengthened ones."""
        if pairs:
            with self._transaction() as conn:
                associations.strengthen(conn, pairs, datetime.now(UTC).timestamp(), step, keep)

    def damaged_rows(self, dimension: int | None = None) -> list[damaged.DamagedRow]:
        """Memories whose row cannot be read or indexed with vectors of ``dimension`` numbers (the
        recorded encoder's if not given), with what is wrong (``storage/damaged.py``)."""
        return damaged.find_damaged(self._query, dimension or self._dimension())

    def set_aside(self, rows: Sequence[damaged.DamagedRow]) -> list[str]:
        """Move damaged memories to the ``set_aside`` table, in one transaction; returns their ids."""
        with self._transaction() as conn:
            return damaged.set_aside(conn, rows, datetime.now(UTC).timestamp())

    def set_aside_count(self) -> int:
        """How many memories ``doctor --repair`` has set aside so far."""
        return damaged.set_aside_count(self._query)

    def pending_vector_writes(self) -> list[tuple[str, str]]:
        """(memory id, operation) of vector writes not yet confirmed by the vector store."""
        return [(r[0], r[1]) for r in self._query("SELECT memory_id, operation FROM vector_outbox")]

    def clear_outbox(self, ids: Iterable[str]) -> None:
        with self._transaction() as conn:
            conn.executemany("DELETE FROM vector_outbox WHERE memory_id = ?", [(i,) for i in ids])

    def record_access(
        self, ids: Sequence[str], at: datetime, co_recalled: Sequence[tuple[str, str]] = ()
    ) -> None:
        """Count one access for each id, remember the time of the retrieval and strengthen the
        co-recall links of ``co_recalled`` (see ``strengthen``), in one transaction."""
        stamp = at.timestamp()
        with self._transaction() as conn:
            conn.executemany(
                "UPDATE memories SET access_count = access_count + 1, last_accessed = ? WHERE id = ?",
                [(stamp, i) for i in ids],
            )
            conn.execute("INSERT OR REPLACE INTO activity (name, at) VALUES ('last_retrieval', ?)", (stamp,))
            if co_recalled:
                associations.strengthen(conn, co_recalled, datetime.now(UTC).timestamp())

    def index_filter(self, where: VectorFilter | None) -> VectorFilter | None:
        """``where`` as the vector index needs it: None when it names only projects and every
        memory is in one of them (one user's store), since Qdrant checks a filter at every point
        a search visits, even one every point passes (1.0 against 0.5 ms at 10,000 memories)."""
        if where is None or where.is_empty():
            return None
        if where.conditions().keys() == {"project"} and not where.has_range and self.only_in(where.projects):
            return None
        return where

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
            f"SELECT 1 FROM (SELECT 1 FROM memories WHERE {gap} LIMIT 1)" for gap, _ in gaps
        )
        return not self._query(probe, [value for _, values in gaps for value in values])

    def counts(self) -> MemoryCounts:
        rows = self._query(
            "SELECT hierarchy_level, memory_type, loader_type = 'session_lesson', COUNT(*) "
            "FROM memories GROUP BY 1, 2, 3"
        )
        by_level = dict.fromkeys(range(3), 0)
        by_type = {kind.value: 0 for kind in MemoryType}
        lessons = 0
        for level, kind, is_lesson, n in rows:
            by_level[level] += n
            by_type[kind] += n
            lessons += n if is_lesson else 0
        projects = self._query("SELECT project, COUNT(*) FROM memories GROUP BY project ORDER BY 2 DESC")
        return MemoryCounts(sum(by_level.values()), by_level, by_type, lessons, dict(projects))

    def activity(self) -> dict[str, datetime]:
        """When memories were last stored and retrieved."""
        rows = self._query("SELECT name, at FROM activity")
        return {name: datetime.fromtimestamp(at, UTC) for name, at in rows}

    def meta(self, key: str) -> str | None:
        rows = self._query("SELECT value FROM store_meta WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self._transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO store_meta (key, value) VALUES (?, ?)", (key, value))

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())
