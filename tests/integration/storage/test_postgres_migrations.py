"""The PostgreSQL schema: SQLite's tables and columns after its migrations, recorded under the same
names, applied once however many stores open at once, every rule a constraint."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from cognitive_memory.errors import StorageError
from cognitive_memory.storage import SQLiteMemoryStore
from cognitive_memory.storage.migrations import MIGRATIONS as SQLITE_MIGRATIONS
from cognitive_memory.storage.postgres import PostgresDatabase, PostgresMemoryStore
from cognitive_memory.storage.postgres.connection import PostgresConnection
from cognitive_memory.storage.postgres.migrations import apply_migrations
from tests.integration.storage.stored import table_rows
from tests.integration.storage.test_postgres_database import add_memory

_SQLITE_ONLY = {"memory_fts", "sqlite_sequence"}  # FTS5's index and AUTOINCREMENT's counter


def _postgres_columns(database: PostgresDatabase) -> dict[str, set[str]]:
    rows = database.rows(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'"
    )
    columns: dict[str, set[str]] = {}
    for table, column in rows:
        columns.setdefault(table, set()).add(column)
    return columns


def _sqlite_columns(db_path: Path) -> dict[str, set[str]]:
    tables = table_rows(db_path, "SELECT name FROM sqlite_master WHERE type = 'table'")
    return {
        name: {row[1] for row in table_rows(db_path, f"PRAGMA table_info('{name}')")}
        for (name,) in tables
        if not name.startswith(tuple(_SQLITE_ONLY))
    }


def test_the_schema_has_sqlites_tables_and_columns_and_records_its_migrations(
    postgres_url: str, tmp_path: Path
) -> None:
    sqlite = SQLiteMemoryStore(tmp_path / "memories.db")
    sqlite.close()
    store = PostgresMemoryStore(postgres_url)

    expected = _sqlite_columns(tmp_path / "memories.db")
    expected["memories"].add("rowid")  # SQLite's is implicit
    expected["memory_lengths"] = {"memory_rowid", "content", "context"}  # what FTS5 counted
    assert _postgres_columns(store.database) == expected
    recorded = store.database.rows("SELECT name FROM schema_migrations ORDER BY name")
    assert [name for (name,) in recorded] == [name for name, _sql in SQLITE_MIGRATIONS]
    store.close()


def test_text_compares_byte_by_byte_as_on_sqlite_whatever_the_servers_locale(postgres_url: str) -> None:
    store = PostgresMemoryStore(postgres_url)
    collations = store.database.rows(
        "SELECT DISTINCT collation_name FROM information_schema.columns "
        "WHERE table_schema = 'public' AND data_type = 'text'"
    )
    assert collations == [("C",)]
    store.close()


def test_reopening_applies_no_migration_again(postgres_url: str) -> None:
    store = PostgresMemoryStore(postgres_url)
    with store.database.transaction() as conn:
        add_memory(conn, "kept")
    before = store.database.rows("SELECT name, applied_at FROM schema_migrations ORDER BY name")
    store.close()

    reopened = PostgresMemoryStore(postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as raw:
        assert apply_migrations(PostgresConnection(raw)) == []
    assert reopened.database.rows("SELECT name, applied_at FROM schema_migrations ORDER BY name") == before
    assert reopened.database.rows("SELECT id FROM memories") == [("kept",)]
    reopened.close()


def test_stores_opening_a_new_database_at_once_apply_each_migration_once(postgres_url: str) -> None:
    with ThreadPoolExecutor(4) as pool:
        stores = list(pool.map(lambda _n: PostgresMemoryStore(postgres_url), range(4)))

    names = stores[0].database.rows("SELECT name FROM schema_migrations")
    assert len(names) == len({name for (name,) in names}) == len(SQLITE_MIGRATIONS)
    for store in stores:
        store.close()


@pytest.fixture
def database(postgres_url: str) -> Iterator[PostgresDatabase]:
    store = PostgresMemoryStore(postgres_url)
    yield store.database
    store.close()


def _refused(database: PostgresDatabase, statement: str, params: tuple[object, ...] = ()) -> str:
    with pytest.raises(StorageError) as raised, database.transaction() as conn:
        conn.execute(statement, params)
    return str(raised.value)


def test_a_key_is_held_by_one_memory_per_project(database: PostgresDatabase) -> None:
    with database.transaction() as conn:
        add_memory(conn, "a")
        add_memory(conn, "b")
        conn.execute("UPDATE memories SET memory_key = 'k' WHERE id = 'a'")

    assert "memories_key" in _refused(database, "UPDATE memories SET memory_key = 'k' WHERE id = 'b'")
    with database.transaction() as conn:
        conn.execute("UPDATE memories SET memory_key = 'k', project = 'other' WHERE id = 'b'")


@pytest.mark.parametrize("name", ["a", "Capital", "9lives", "has space", "dash-ed", "x" * 41])
def test_a_relation_name_outside_the_rule_is_refused(database: PostgresDatabase, name: str) -> None:
    with database.transaction() as conn:
        add_memory(conn, "a")
        add_memory(conn, "b")
    insert = "INSERT INTO relations (from_id, to_id, relation, created_at) VALUES ('a', 'b', ?, 0)"

    assert "relations_relation_check" in _refused(database, insert, (name,))


def test_relations_links_versions_and_chunks_go_with_their_memory(database: PostgresDatabase) -> None:
    with database.transaction() as conn:
        add_memory(conn, "a")
        add_memory(conn, "b")
        conn.execute(
            "INSERT INTO relations (from_id, to_id, relation, created_at) VALUES ('a', 'b', 'cites', 0)"
        )
        conn.execute(
            "INSERT INTO connections (source_id, target_id, kind, weight, updated_at) "
            "VALUES ('b', 'a', 'link', 1, 0)"
        )
        conn.execute(
            "INSERT INTO source_chunks (memory_id, source_key, chunk_key, content_hash, position) "
            "VALUES ('a', 's', 'c', 'h', 0)"
        )
        conn.execute("DELETE FROM memories WHERE id = 'a'")

    for table in ("relations", "connections", "source_chunks"):
        assert database.rows(f"SELECT count(*) FROM {table}") == [(0,)]


def test_the_caller_fields_of_a_memory_follow_its_metadata(database: PostgresDatabase) -> None:
    with database.transaction() as conn:
        add_memory(conn, "m", metadata='{"team": "core", "n": 3, "done": true, "speaker": "x", "deep": {}}')
        add_memory(conn, "listed", metadata="[1, 2]")

    fields = "SELECT memory_id, name, kind, value FROM memory_fields ORDER BY name"
    assert database.rows(fields) == [
        ("m", "done", "bool", 1),
        ("m", "n", "number", 3),
        ("m", "team", "text", "core"),
    ]
    with database.transaction() as conn:
        conn.execute("UPDATE memories SET metadata = ? WHERE id = 'm'", ('{"n": 4.5}',))
    assert database.rows(fields) == [("m", "n", "number", 4.5)]
    with database.transaction() as conn:
        conn.execute("UPDATE memories SET loader_type = 'markdown' WHERE id = 'm'")
    assert database.rows(fields) == []


def test_metadata_or_tags_that_do_not_parse_are_refused(database: PostgresDatabase) -> None:
    with database.transaction() as conn:
        add_memory(conn, "m")

    assert "json" in _refused(database, "UPDATE memories SET metadata = '{not json'")
    assert "json" in _refused(database, "UPDATE memories SET tags = '[unclosed'")


def test_the_change_log_names_what_each_write_changed(database: PostgresDatabase) -> None:
    with database.transaction() as conn:
        add_memory(conn, "a")
        add_memory(conn, "b")
        conn.execute(
            "INSERT INTO relations (from_id, to_id, relation, created_at) VALUES ('a', 'b', 'cites', 0)"
        )
        conn.execute("INSERT INTO memory_words (memory_rowid, terms) VALUES (2, 'word')")
        conn.execute("DELETE FROM memories WHERE id = 'a'")

    logged = database.rows("SELECT memory_id, kind FROM change_log ORDER BY seq")
    assert logged[:5] == [("a", "memory"), ("b", "memory"), ("a", "links"), ("b", "links"), ("b", "words")]
    # the delete, and the relation that went with its memory, in the order the server ran them
    assert sorted(logged[5:]) == [("a", "links"), ("a", "memory"), ("b", "links")]


def test_a_missing_database_and_a_user_without_rights_say_what_to_do(postgres_url: str) -> None:
    missing = psycopg.conninfo.make_conninfo(postgres_url, dbname="no_such_database")
    with pytest.raises(StorageError) as raised:
        PostgresMemoryStore(missing)
    assert raised.value.code == "database_missing"

    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute("DROP ROLE IF EXISTS visitor")
        admin.execute("CREATE ROLE visitor LOGIN PASSWORD 'hunter2-secret'")
    visitor = psycopg.conninfo.make_conninfo(postgres_url, user="visitor", password="hunter2-secret")
    try:
        with pytest.raises(StorageError) as raised:
            PostgresMemoryStore(visitor)
        assert raised.value.code == "database_rights"
        assert "hunter2-secret" not in str(raised.value)
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute(
                sql.SQL("REVOKE ALL ON DATABASE {} FROM visitor").format(
                    sql.Identifier(psycopg.conninfo.conninfo_to_dict(postgres_url)["dbname"])
                )
            )
            admin.execute("DROP ROLE visitor")


@pytest.mark.parametrize(
    ("expression", "matches"),
    [
        ('content : (("postgresql") AND ("note" OR "memo"))', True),
        ('content : (("postgresql") AND ("memo"))', False),
        ('content : (("e mail"))', True),
        ('content : (("e mail" OR "post") AND ("wrong"))', False),
    ],
)
def test_a_list_filters_expression_matches_a_memorys_own_terms(
    database: PostgresDatabase, expression: str, matches: bool
) -> None:
    held = "a e mail note postgresql"

    assert database.rows("SELECT lexical_match(?, ?)", (held, expression)) == [(matches,)]
