"""The repositories' SQL on PostgreSQL 15: dialect.py's POSTGRES fragments and a sample of the
repositories' statements, run on hand-made tables of a throwaway server, give what SQLite gives.

The server is the test process's throwaway one (tests/fixtures/postgres.py); without one the tests
are skipped with one line saying how to get it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import psycopg
import pytest

from cognitive_memory.core.memory import HierarchyLevel, SourceKind
from cognitive_memory.core.pruning import PruneCriteria
from cognitive_memory.index import VectorFilter
from cognitive_memory.storage import (
    associations,
    browse,
    consolidation,
    identifiers,
    pruning,
    ranking,
    relations,
)
from cognitive_memory.storage.change_log import ChangeLog
from cognitive_memory.storage.connection import SQLiteConnection
from cognitive_memory.storage.indexed_words import IndexedWords
from cognitive_memory.storage.links import Links
from cognitive_memory.storage.memories import Memories
from cognitive_memory.storage.migrations import apply_migrations
from cognitive_memory.storage.outbox import Outbox
from cognitive_memory.storage.overview import overview_of
from cognitive_memory.storage.postgres.connection import PostgresConnection, prepare
from cognitive_memory.storage.properties import StoreProperties, keep, note_activity
from cognitive_memory.storage.rows import MEMORY_COLUMNS, UNUSED_STRENGTH, memory_row, queue_vector_writes
from cognitive_memory.storage.sources import sources_under
from cognitive_memory.storage.sql import Connection
from cognitive_memory.storage.vocabulary import held, near
from cognitive_memory.storage.words import remember_terms
from tests.integration.storage.stored import STORED_AT, stored_memory

# The tables the sample reads and writes, as PostgreSQL's schema has them (storage/postgres/ has
# the real one): the same names and columns, ``memories.rowid`` a column of its own; the links'
# ends of the ``C`` collation, as every id there is (a recursive query over them must say so).
_TABLES = """
CREATE TABLE memories (
    rowid BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE, id TEXT PRIMARY KEY, content TEXT NOT NULL,
    hierarchy_level INTEGER NOT NULL, memory_type TEXT NOT NULL, created_date TEXT NOT NULL,
    timestamp DOUBLE PRECISION NOT NULL, modified_date TEXT, source_date TEXT,
    last_accessed DOUBLE PRECISION, access_count INTEGER NOT NULL DEFAULT 0,
    importance_score DOUBLE PRECISION NOT NULL, strength DOUBLE PRECISION NOT NULL,
    metadata TEXT NOT NULL CHECK (CAST(metadata AS jsonb) IS NOT NULL),
    tags TEXT NOT NULL CHECK (CAST(tags AS jsonb) IS NOT NULL), dimensions TEXT NOT NULL,
    loader_type TEXT, session_id TEXT, embedding BYTEA NOT NULL, project TEXT NOT NULL DEFAULT 'default',
    content_key TEXT, speaker TEXT, origin TEXT, memory_key TEXT
);
CREATE TABLE connections (
    source_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    target_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    kind TEXT NOT NULL, weight DOUBLE PRECISION NOT NULL CHECK (weight > 0),
    updated_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (source_id, target_id, kind)
);
CREATE TABLE relations (
    from_id TEXT COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    to_id TEXT COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    relation TEXT NOT NULL, note TEXT, created_at DOUBLE PRECISION NOT NULL, session_id TEXT,
    weight DOUBLE PRECISION NOT NULL DEFAULT 0.8, PRIMARY KEY (from_id, to_id, relation)
);
CREATE TABLE memory_versions (
    memory_id TEXT NOT NULL, version INTEGER NOT NULL, content TEXT NOT NULL, PRIMARY KEY (memory_id, version)
);
CREATE TABLE memory_fields (memory_id TEXT NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL, value JSONB);
CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE activity (name TEXT PRIMARY KEY, at DOUBLE PRECISION NOT NULL);
CREATE TABLE vector_outbox (
    memory_id TEXT PRIMARY KEY, operation TEXT NOT NULL, queued_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE memory_words (
    memory_rowid BIGINT PRIMARY KEY, terms TEXT NOT NULL, context TEXT NOT NULL DEFAULT ''
);
CREATE TABLE vocabulary (term TEXT PRIMARY KEY, memories INTEGER NOT NULL);
CREATE TABLE vocabulary_deletes (variant TEXT NOT NULL, term TEXT NOT NULL, PRIMARY KEY (variant, term));
CREATE TABLE document_frequencies (term TEXT PRIMARY KEY, memories INTEGER NOT NULL);
CREATE TABLE sources (
    key TEXT PRIMARY KEY, loader_type TEXT NOT NULL, fingerprint TEXT NOT NULL, state TEXT NOT NULL,
    loaded_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE change_log (seq BIGINT PRIMARY KEY, memory_id TEXT NOT NULL, kind TEXT NOT NULL);
"""


class _Access:
    """The repositories' ``DatabaseAccess`` over one connection: every transaction and read on it."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        yield self.connection

    def read(self, query: Callable[[Connection], Any]) -> Any:
        return query(self.connection)

    read_apart = read

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return self.connection.execute(sql, params).fetchall()

    def snapshot(self) -> int | None:
        return None


@pytest.fixture
def postgres(postgres_url: str) -> Iterator[Connection]:
    """A fresh database of the test process's server (tests/fixtures/postgres.py) with the
    hand-made tables, as a repository's connection (storage/postgres/'s, in autocommit)."""
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        prepare(connection)
        connection.execute(_TABLES)
        yield PostgresConnection(connection)


@pytest.fixture
def sqlite() -> Iterator[Connection]:
    """SQLite's store schema (every migration) in memory."""
    connection = sqlite3.connect(":memory:", isolation_level=None, factory=SQLiteConnection)
    apply_migrations(connection)
    yield connection
    connection.close()


def _seed(conn: Connection) -> list[str]:
    """Six memories (two projects, tags, sessions, a loaded one, a question and its answer), their
    links in time, user links and a source: the same rows on either database."""
    at = STORED_AT.timestamp()
    memories = [
        stored_memory("a1", tags=("ops", "db"), session_id="s1", metadata={"team": "core"}, speaker="ann"),
        stored_memory("a2", tags=("ops",), session_id="s1", content="Which port? It moved.", speaker="ann"),
        stored_memory("a3", tags=(), session_id="s1", project="other", speaker="bob"),
        stored_memory("b1", tags=("db",), importance_score=0.1, source=SourceKind.MARKDOWN),
        stored_memory("b2", tags=("x", "ops"), hierarchy_level=HierarchyLevel.CONCEPT, key="deploy"),
        stored_memory("c1", tags=("ops",), importance_score=0.9),
    ]
    memories = [
        replace(m, timestamp=m.timestamp.fromtimestamp(at + n, m.timestamp.tzinfo))
        for n, m in enumerate(memories)
    ]
    conn.executemany(
        f"INSERT INTO memories ({MEMORY_COLUMNS}, content_key, strength, dimensions) "
        f"VALUES ({', '.join('?' * 21)}, {UNUSED_STRENGTH}, '{{}}')",
        [memory_row(memory) for memory in memories],
    )
    if conn.dialect.postgres:  # SQLite's triggers write these (migration 0020)
        conn.execute("""INSERT INTO memory_fields VALUES ('a1', 'team', 'text', '"core"')""")
    associations.connect(conn, [("a2", "a1", 1.0), ("a3", "a2", 1.0), ("a3", "a1", 0.5)], "temporal", at)
    associations.connect(conn, [("b1", "b2", 0.4)], "semantic", at)
    for n, link in enumerate(
        [("b2", "b1", "supersedes"), ("c1", "b1", "relates_to"), ("c1", "a1", "part_of")]
    ):
        relations.insert_link(conn, link, "why", None, at + (n % 2), 0.5)
    conn.execute(
        "INSERT INTO sources (key, loader_type, fingerprint, state, loaded_at) VALUES (?, ?, ?, ?, ?)",
        ("Notes/a_b.md", "markdown", "f", "{}", at),
    )
    return [memory.id for memory in memories]


def _on_both(sqlite: Connection, postgres: Connection, check: Callable[[Connection], Any]) -> tuple[Any, Any]:
    _seed(sqlite)
    _seed(postgres)
    return check(sqlite), check(postgres)


def test_the_dialects_fragments_are_read_alike(sqlite: Connection, postgres: Connection) -> None:
    def fragments(conn: Connection) -> list[Any]:
        dialect = conn.dialect
        items = dialect.list_items(dialect.tags_list("memories.tags"), "tag")
        return conn.execute(
            f"SELECT id, {dialect.json_valid('metadata')}, {dialect.holds_bytes('embedding')}, "
            f"(SELECT count(*) FROM {items}), {dialect.tags_list('memories.tags')} FROM memories "
            f"WHERE {dialect.unindexed('project')} = ? ORDER BY id",
            ("default",),
        ).fetchall()

    on_sqlite, on_postgres = _on_both(sqlite, postgres, fragments)

    assert [(i, bool(v), bool(b), n, t) for i, v, b, n, t in on_sqlite] == on_postgres
    assert on_postgres[0] == ("a1", True, True, 2, '["ops", "db"]')


def test_filters_pages_and_overviews_match(sqlite: Connection, postgres: Connection) -> None:
    def listed(conn: Connection) -> list[Any]:
        wheres = [
            VectorFilter(),
            VectorFilter(tags=("ops",), projects=("default",)),
            VectorFilter(metadata=(("team", "text", "core"),), created_after=0.0),
            VectorFilter(sessions=("s1",), hierarchy_levels=(1,)),
        ]
        first = browse.page_rows(conn, "id", wheres[1], "importance", 2)
        after = browse.page_rows(conn, "id", wheres[1], "importance", 2, first.next_key)
        return [
            [browse.page_rows(conn, "id, project", where, "created", 10).rows for where in wheres],
            [first.rows, after.rows, first.total],
            [overview_of(conn, where, None, 2) for where in wheres],
        ]

    on_sqlite, on_postgres = _on_both(sqlite, postgres, listed)

    assert on_sqlite == on_postgres
    assert on_postgres[1][:2] == [[("c1",), ("b2",)], [("a2",), ("a1",)]]


def test_links_walks_and_neighbourhoods_match(sqlite: Connection, postgres: Connection) -> None:
    def linked(conn: Connection) -> list[Any]:
        associations.strengthen(conn, [("a1", "c1"), ("a1", "b1"), ("a1", "c1")], 5.0, keep=1)
        associations.connect(conn, [("a1", "c1", 0.05)], "semantic", 6.0)
        walked = relations.walk(conn, "b1", 2, (), 10)
        chain = relations.supersedes_chain(conn, "b1", "b2")
        removed = relations.remove_links(conn, "c1", "b1", None)
        links = Links(_Access(conn))
        return [
            associations.neighbourhood(conn, ["a1", "a3", "b1", "c1"]),
            list(associations.every_neighbourhood(conn)),
            conn.execute("SELECT * FROM connections ORDER BY source_id, target_id, kind").fetchall(),
            walked,
            chain,
            removed,
            relations.superseded_by(conn, ["b1"]),
            links.answers(["a1", "a2", "a3"]),
        ]

    on_sqlite, on_postgres = _on_both(sqlite, postgres, linked)

    assert [tuple(row) for row in on_sqlite[1]] == [tuple(row) for row in on_postgres[1]]
    assert on_sqlite[:1] + on_sqlite[2:] == on_postgres[:1] + on_postgres[2:]
    assert on_postgres[7] == {"a2": "a3"}


def test_memories_and_ranking_reads_match(sqlite: Connection, postgres: Connection) -> None:
    def read(conn: Connection) -> list[Any]:
        memories = Memories(_Access(conn), lambda: 384)
        return [
            memories.latest_matching(VectorFilter(tags=("ops",)), 3),
            memories.only_in(["default"]),
            memories.only_in(["default", "other"]),
            memories.counts(),
            sorted(memories.vectors(["a1", "b2"])),
            [row.id for row in ranking.ranking_rows(conn, ["c1", "a1", "zz"], 384)],
            identifiers.ids_starting_with(conn, "memories", "a", 5),
            identifiers.unique_prefix_lengths(conn, "memories", ["a1", "b2"]),
            consolidation.projects(conn, None, ["markdown"]),
            consolidation.project_rows(conn, "default", ["markdown"], 384).candidates,
            pruning.prune_candidates(
                conn, PruneCriteria(max_importance=0.5, tags=("ops",), keep_latest=1), 0.0, ["git"], 5
            ),
            sources_under(conn, "markdown", "notes/a_"),
            sources_under(conn, "markdown", "Notes/ab"),
        ]

    on_sqlite, on_postgres = _on_both(sqlite, postgres, read)

    assert on_sqlite == on_postgres
    assert on_postgres[11][0].key == "Notes/a_b.md" and on_postgres[12] == []


def test_upserts_and_counters_match(sqlite: Connection, postgres: Connection) -> None:
    def written(conn: Connection) -> list[Any]:
        access = _Access(conn)
        keep(conn, "k", "1")
        keep(conn, "k", "2")
        note_activity(conn, "last_storage", 1.0)
        note_activity(conn, "last_storage", 2.0)
        queue_vector_writes(conn, ["a1", "b1"], "upsert", 1.0)
        queue_vector_writes(conn, ["a1"], "delete", 2.0)
        keep(conn, "word_documents", "0")
        remember_terms(conn, 1, "apple banana", ["cherry"])
        remember_terms(conn, 1, "apple durian", ["cherry"])
        words = IndexedWords(access)
        words.advance(7)
        words.advance(3)
        conn.executemany(
            "INSERT INTO change_log (seq, memory_id, kind) VALUES (?, ?, 'memory')",
            [(900 + n, "a1") for n in range(3)],
        )
        changes = ChangeLog(access)
        return [
            StoreProperties(access).get("k"),
            conn.execute("SELECT name, at FROM activity").fetchall(),
            sorted(Outbox(access).pending()),
            conn.execute("SELECT memory_rowid, terms, context FROM memory_words").fetchall(),
            held(conn, ["appl", "banana", "durian"]),
            near(conn, ["durain"]),
            conn.execute(
                "SELECT value FROM store_meta WHERE key IN (?, ?) ORDER BY key",
                ("word_documents", "words_indexed_through"),
            ).fetchall(),
            words.next_batch(5),
            [change.memory_id for change in changes.since(900).changes],
        ]

    on_sqlite, on_postgres = _on_both(sqlite, postgres, written)

    assert on_sqlite[:8] == on_postgres[:8]
    assert on_postgres[2] == [("a1", "delete"), ("b1", "upsert")] and on_postgres[6] == [("1",), ("7",)]
    assert on_postgres[8] == ["a1", "a1"]
