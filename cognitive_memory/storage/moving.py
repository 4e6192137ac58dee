"""Moving a store of record into another (SQLite to PostgreSQL and back): every row of what the
store records, read in one snapshot of the source and written in one transaction of the target,
which must hold no memory, trash entry or source yet.

Copied, parents before children: the tables in ``COPIED``, each memory with its ``rowid`` (the
words and the full-text index refer to it), each trash entry with its number. Not copied, since
the target makes them itself: the change log and ``memory_fields`` (its triggers write them as
the rows arrive), the lexical entries (SQLite's full-text index, PostgreSQL's ``memory_lengths``:
written again from the rows), the vector outbox (the target's index is written whole from the
rows at its first start) and the migrations (the target's own). Of ``store_meta``, the store's
identity and the change log's trim stay the source's: an index that followed the source must not
take the target for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from cognitive_memory.core.store.values import TableRows
from cognitive_memory.errors import StorageError
from cognitive_memory.storage.associations import lexical_texts, write_lexical_entry
from cognitive_memory.storage.sql import Connection, DatabaseAccess, column_names

__all__ = ["COPIED", "count_rows", "rows_of", "take_rows"]

# Every table copied, parents first (foreign keys), with the column its rows are read in order
# of, a page at a time.
COPIED: tuple[tuple[str, str], ...] = (
    ("memories", "rowid"),
    ("memory_words", "memory_rowid"),
    ("memory_versions", "memory_id, version"),
    ("connections", "source_id, target_id, kind"),
    ("relations", "from_id, to_id, relation"),
    ("sources", "key"),
    ("source_chunks", "memory_id"),
    ("source_links", "memory_id, target_key"),
    ("source_digests", "source_key, item_key"),
    ("trash", "entry"),
    ("prune_tokens_used", "digest"),
    ("set_aside", "id, set_aside_at"),
    ("vocabulary", "term"),
    ("vocabulary_deletes", "variant, term"),
    ("document_frequencies", "term"),
    ("store_meta", "key"),
    ("activity", "name"),
)
# Identity columns the rows are written with (each catches up with them afterwards).
_IDENTITIES = {"memories": "rowid", "trash": "entry"}
# store_meta keys that describe the source itself, not its memories.
_OWN_KEYS = ("store_id", "change_log_trimmed")
# Rows per page read and written.
PAGE = 1_000


def rows_of(conn: Connection) -> Iterator[TableRows]:
    """Every copied table's rows, a page at a time (in one read of ``conn``'s store)."""
    for table, order in COPIED:
        columns = _columns(conn, table)
        where = " WHERE key NOT IN (?, ?)" if table == "store_meta" else ""
        cursor = conn.execute(
            f"SELECT {', '.join(columns)} FROM {table}{where} ORDER BY {order}", _OWN_KEYS if where else ()
        )
        while page := cursor.fetchmany(PAGE):
            yield TableRows(table, columns, [tuple(row) for row in page])


def _columns(conn: Connection, table: str) -> tuple[str, ...]:
    """The table's columns by name; a memory's ``rowid`` first (SQLite's is no column)."""
    names = [
        name for name in column_names(conn.execute(f"SELECT * FROM {table} WHERE 1 = 0")) if name != "rowid"
    ]
    return ("rowid", *names) if table == "memories" else tuple(names)


def count_rows(conn: Connection) -> dict[str, int]:
    """How many rows each copied table holds (``store_meta``: those that are copied)."""
    counts = {}
    for table, _ in COPIED:
        where = " WHERE key NOT IN (?, ?)" if table == "store_meta" else ""
        counts[table] = int(
            conn.execute(f"SELECT COUNT(*) FROM {table}{where}", _OWN_KEYS if where else ()).fetchone()[0]
        )
    return counts


def take_rows(
    database: DatabaseAccess, pages: Iterable[TableRows], expected: Mapping[str, int]
) -> dict[str, int]:
    """Write ``pages`` into ``database``, which must hold no memory, trash entry or source, in one
    transaction that ends with the counts checked against ``expected`` (anything else rolls it
    back); returns the counts."""
    with database.transaction() as conn:
        held = _held(conn)
        if held:
            raise StorageError(
                f"The store to move into already holds {held}: move into an empty store (a new "
                "database, or a SQLite file that does not exist yet).",
                code="target_not_empty",
            )
        conn.execute("DELETE FROM store_meta WHERE key NOT IN (?, ?)", _OWN_KEYS)
        conn.execute("DELETE FROM activity")
        for page in pages:
            keeping = conn.dialect.keeping_identity() if page.table in _IDENTITIES else ""
            marks = ", ".join("?" * len(page.columns))
            conn.executemany(
                f"INSERT INTO {page.table} ({', '.join(page.columns)}){keeping} VALUES ({marks})", page.rows
            )
        for table, column in _IDENTITIES.items():
            if statement := conn.dialect.identity_caught_up(table, column):
                conn.execute(statement)
        _write_lexical_entries(conn)
        counts = count_rows(conn)
        differing = {table: (expected[table], n) for table, n in counts.items() if expected[table] != n}
        if differing:
            said = ", ".join(f"{table} {want} -> {got}" for table, (want, got) in differing.items())
            raise StorageError(f"The move was undone: the rows did not all arrive ({said}).")
        return counts


def _held(conn: Connection) -> str | None:
    """What the store already holds that a move must not be mixed into."""
    for table, what in (("memories", "memories"), ("trash", "trash entries"), ("sources", "loaded sources")):
        n = int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
        if n:
            return f"{n:,} {what}"
    return None


def _write_lexical_entries(conn: Connection) -> None:
    """The lexical entry of every memory (SQLite's full-text index; PostgreSQL's lengths, which
    the word vectors' average is read from), from its text and its neighbours' in time."""
    for (memory_id,) in conn.execute("SELECT id FROM memories ORDER BY rowid").fetchall():
        rowid, own, texts = lexical_texts(conn, str(memory_id))
        write_lexical_entry(conn, rowid, own, "\n".join(texts))
