"""The store's vocabulary (storage/vocabulary.py): term counts, the delete index and the document
frequencies follow every write, migrations 0015 and 0016 fill them for a store made before them,
and ``rebuild`` agrees with both."""

from __future__ import annotations

import contextlib
import dataclasses
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any, TypeVar

from cognitive_memory.storage import SQLiteMemoryStore, vocabulary
from tests.integration.storage.stored import stored_memory

T = TypeVar("T")


Where = Path | SQLiteMemoryStore  # a SQLite file read apart, or a store (either kind) read through


def _read(where: Where, query: Callable[[Any], T]) -> T:
    if isinstance(where, Path):
        with closing(sqlite3.connect(where)) as conn:
            return query(conn)
    return where.database.read(query)


def _tables(conn: Any) -> tuple[dict[str, int], set[tuple[str, str]]]:
    counts = {str(t): int(n) for t, n in conn.execute("SELECT term, memories FROM vocabulary")}
    index = {(str(v), str(t)) for v, t in conn.execute("SELECT variant, term FROM vocabulary_deletes")}
    return counts, index


def _frequencies(conn: Any) -> tuple[dict[str, int], int]:
    counts = {str(t): int(n) for t, n in conn.execute("SELECT term, memories FROM document_frequencies")}
    return counts, vocabulary.documents(conn)


def tables(where: Where) -> tuple[dict[str, int], set[tuple[str, str]]]:
    return _read(where, _tables)


def frequencies(where: Where) -> tuple[dict[str, int], int]:
    """The document frequencies and the number of documents, as recall reads them."""
    return _read(where, _frequencies)


def lexical_frequencies(path: Path) -> tuple[dict[str, int], int]:
    """How many rows of the lexical index (FTS5, SQLite's alone) hold each term in either column,
    and its rows."""
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE VIRTUAL TABLE temp.rows USING fts5vocab(main, memory_fts, 'row')")
        counts = {str(t): int(n) for t, n in conn.execute("SELECT term, doc FROM temp.rows")}
        (total,) = conn.execute("SELECT count(*) FROM memory_fts").fetchone()
    return counts, int(total)


class _Undo(Exception):
    """Raised to roll back a rebuild made only to be read."""


def rebuilt(where: Where) -> tuple[dict[str, int], set[tuple[str, str]]]:
    """The tables as ``vocabulary.rebuild`` fills them from memory_words (rolled back after)."""
    found: list[Any] = []

    def rebuild(conn: Any) -> None:
        vocabulary.rebuild(conn)
        found.extend([_tables(conn), _frequencies(conn)])

    if isinstance(where, Path):
        with closing(sqlite3.connect(where, isolation_level=None)) as conn:
            conn.execute("BEGIN")
            rebuild(conn)
            conn.execute("ROLLBACK")
    else:
        with contextlib.suppress(_Undo), where.database.transaction() as conn:
            rebuild(conn)
            raise _Undo
    assert found[1] == frequencies(where)
    return found[0]


def test_each_term_counts_the_memories_holding_it_through_adds_and_deletes(store: SQLiteMemoryStore) -> None:
    store.memories.add(
        [
            stored_memory("a", content="Python context managers close files"),
            stored_memory("b", content="Python decorators wrap functions"),
        ]
    )
    counts, index = tables(store)
    assert counts["python"] == 2 and counts["decor"] == 1
    assert ("pthon", "python") in index and ("python", "python") in index

    store.memories.delete(["b"])

    counts, index = tables(store)
    assert counts["python"] == 1 and "decor" not in counts
    assert not any(term == "decor" for _, term in index)
    assert tables(store) == rebuilt(store)


def test_a_memory_re_indexed_for_its_neighbours_is_not_counted_twice(store: SQLiteMemoryStore) -> None:
    """Storing a memory in a session re-indexes its predecessor (its context changes), not its terms."""
    store.memories.add([stored_memory("first", content="kubernetes scheduler", session_id="s")])
    store.memories.add([stored_memory("second", content="kubernetes pods", session_id="s")])

    counts, _ = tables(store)

    assert counts["kubernet"] == 2 and counts["schedul"] == 1
    assert tables(store) == rebuilt(store)


def test_terms_of_digits_or_short_terms_are_counted_but_not_in_the_delete_index(
    store: SQLiteMemoryStore,
) -> None:
    store.memories.add([stored_memory("a", content="go v2 build 2024")])

    counts, index = tables(store)

    assert {"go", "v2", "build", "2024"} <= set(counts)
    assert {term for _, term in index} == {"build"}


def test_migration_0015_fills_the_vocabulary_of_a_store_made_before_it(db_path: Path) -> None:
    old = SQLiteMemoryStore(db_path)
    old.memories.add(
        [
            stored_memory("a", content="The PostgreSQL replica lags behind"),
            stored_memory("b", content="A PostgreSQL upgrade, version 16"),
        ]
    )
    old.close()
    with closing(sqlite3.connect(db_path)) as conn, conn:  # as a release before 0015 left it
        conn.execute("DROP TABLE vocabulary")
        conn.execute("DROP TABLE vocabulary_deletes")
        conn.execute("DELETE FROM schema_migrations WHERE name = '0015_vocabulary'")

    SQLiteMemoryStore(db_path).close()

    counts, index = tables(db_path)
    assert counts["postgresql"] == 2 and counts["16"] == 1
    assert ("postgrsql", "postgresql") in index
    assert (counts, index) == rebuilt(db_path)


def test_document_frequencies_count_own_and_neighbours_terms_as_the_lexical_index_does(
    store: SQLiteMemoryStore, db_path: Path, store_kind: str
) -> None:
    """A term counts once per memory holding it in its own text or its neighbours' in time, as
    FTS5 counts its rows, through stores in a session, an edit and a delete."""
    texts = ["Kubernetes scheduler stalls", "The pods restart", "Grafana alerts fired", "Quiet night"]
    memories = [stored_memory(f"m{n}", content=text, session_id="s") for n, text in enumerate(texts)]
    for memory in memories:
        store.memories.add([memory])
    counts, total = frequencies(store)
    assert counts["kubernet"] == 3 and counts["grafana"] == 4 and counts["quiet"] == 3 and total == 4

    edited = dataclasses.replace(memories[1], content="The pods restart after Grafana alerts")
    store.memories.rewrite(edited, memories[1], "s")
    store.memories.delete(["m3"])

    if store_kind == "sqlite":  # FTS5's counts: SQLite's alone
        assert frequencies(store) == lexical_frequencies(db_path)
    assert "quiet" not in frequencies(store)[0] and frequencies(store)[1] == 3
    assert tables(store) == rebuilt(store)


def test_migration_0016_fills_the_document_frequencies_of_a_store_made_before_it(db_path: Path) -> None:
    old = SQLiteMemoryStore(db_path)
    old.memories.add([stored_memory("a", content="The PostgreSQL replica lags behind", session_id="s")])
    old.memories.add([stored_memory("b", content="A PostgreSQL upgrade, version 16", session_id="s")])
    old.close()
    with closing(sqlite3.connect(db_path)) as conn, conn:  # as a release before 0016 left it
        conn.execute("DROP TABLE document_frequencies")
        conn.execute("ALTER TABLE memory_words DROP COLUMN context")
        conn.execute("DELETE FROM store_meta WHERE key = ?", (vocabulary.DOCUMENTS,))
        conn.execute("DELETE FROM schema_migrations WHERE name = '0016_document_frequencies'")

    reopened = SQLiteMemoryStore(db_path)
    reopened.memories.add([stored_memory("c", content="Replica lag alerts", session_id="s")])
    reopened.close()

    counts, total = frequencies(db_path)
    assert counts["replica"] == 3 and counts["upgrad"] == 3 and counts["16"] == 3 and total == 3
    assert (counts, total) == lexical_frequencies(db_path)
    assert tables(db_path) == rebuilt(db_path)
