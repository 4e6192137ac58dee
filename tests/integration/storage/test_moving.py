"""Moving a store of record (storage/moving.py): a lived-in SQLite store copied into PostgreSQL,
and that copied back into a new SQLite file, holds the same rows at each step, and the word
vectors' average length read the same way on each."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cognitive_memory.lifecycle.forgetting import trash
from cognitive_memory.linking import link
from cognitive_memory.storage import SQLiteMemoryStore, moving
from cognitive_memory.storage.postgres import PostgresMemoryStore
from cognitive_memory.system import CognitiveSystem

TEXTS = (
    "The deploy window is Tuesday at noon.",
    "The billing service is owned by the payments team.",
    "Release notes go out on Fridays.",
    "The staging cluster moved to the Frankfurt region.",
)


def _lived_in(system: CognitiveSystem) -> None:
    ids = [system.store(text, session_id="s1").memory.id for text in TEXTS]
    system.store("The coding style is tabs.", key="coding-style")
    system.store("The coding style is four spaces.", key="coding-style")  # a version
    link(system.records, ids[1], ids[2], "depends_on", note="payments ship notes")
    trash(system, [ids[3]], "forgotten", None)
    system.retrieve("deploy window")  # uses, co-recall links
    system.flush()


def _rows(store: Any) -> list[tuple[str, tuple[str, ...], list[tuple[Any, ...]]]]:
    return store.database.read(
        lambda conn: [
            (page.table, page.columns, [tuple(row) for row in page.rows]) for page in moving.rows_of(conn)
        ]
    )


def test_a_store_moved_to_postgresql_and_back_holds_the_same_rows(
    hash_system: CognitiveSystem, postgres_database: Callable[[], str], tmp_path: Path
) -> None:
    _lived_in(hash_system)
    source = hash_system.records
    on_server = PostgresMemoryStore(postgres_database(), tmp_path / "server")
    back = SQLiteMemoryStore(tmp_path / "back.db")
    try:
        counts = source.copy_into(on_server)
        assert on_server.copy_into(back) == counts
        assert (
            counts["memories"] == 4
            and counts["memory_versions"] == 1
            and counts["trash"] == 1
            and counts["relations"] == 1
        )

        assert _rows(on_server) == _rows(source) == _rows(back)
        averages = [store.word_documents.current_average() for store in (source, on_server, back)]
        assert averages[0] > 0 and averages[0] == averages[1] == averages[2]
        assert on_server.database.rows("SELECT count(*) FROM change_log WHERE kind = 'memory'")[0][0] >= 4
    finally:
        on_server.close()
        back.close()
