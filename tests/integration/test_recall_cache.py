"""The ranking rows and link lists recall keeps between recalls (storage/recall_cache.py) are what
SQLite holds after every kind of write: a store, an edit, the bookkeeping after a recall, a link
and its removal, a forget, a delete, an import, a consolidation, a write by another process; and
a cache whose changes were pruned away starts again."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest

from cognitive_memory.core.records import MemoryEdit
from cognitive_memory.service import MemoryService
from cognitive_memory.storage import SQLiteMemoryStore, associations, ranking, recall_cache
from cognitive_memory.storage import relations as relation_sql
from cognitive_memory.system import CognitiveSystem

NOTES = [
    "The deploy pipeline runs on GitHub Actions with a matrix of Python versions",
    "Postgres connection pool exhausted under load; raised max_connections to 200",
    "The deploy pipeline caches wheels between runs to save four minutes",
    "Kafka consumer lag alarms fire when the lag passes ten thousand messages",
    "Redis is the session store; keys expire after thirty minutes of inactivity",
    "The staging cluster mirrors production with a tenth of the nodes",
]


@pytest.fixture
def service(hash_system: CognitiveSystem) -> MemoryService:
    return MemoryService(hash_system, session_id="s1")


def _ids(store: SQLiteMemoryStore) -> list[str]:
    return [memory.id for batch in store.memories.batches() for memory in batch]


def _cached(
    store: SQLiteMemoryStore, ids: list[str]
) -> tuple[list[ranking.RankingRow], tuple[object, object]]:
    """What recall reads, through the cache, in one read transaction (as recall reads them)."""
    return store.together(lambda: (store.memories.ranking_rows(ids), store.links.neighbourhood(ids)))


def _fresh(
    store: SQLiteMemoryStore, ids: list[str]
) -> tuple[list[ranking.RankingRow], tuple[object, object]]:
    """The same, read from SQLite alone."""
    dimension = store.properties.dimension()
    return store.database.read(
        lambda conn: (
            ranking.ranking_rows(conn, ids, dimension),
            associations.neighbourhood(conn, ids, relation_sql.USER_LINK_WEIGHT),
        )
    )


def _same(store: SQLiteMemoryStore, ids: list[str], after: str = "") -> None:
    cached_rows, cached_links = _cached(store, ids)
    fresh_rows, fresh_links = _fresh(store, ids)
    assert [_comparable(row) for row in cached_rows] == [_comparable(row) for row in fresh_rows], after
    assert cached_links == fresh_links, after


def _comparable(row: ranking.RankingRow) -> tuple[object, ...]:
    return (*(getattr(row, name) for name in row.__slots__ if name != "embedding"), row.embedding.tobytes())


def test_every_kind_of_write_is_seen_by_the_next_recall(
    hash_system: CognitiveSystem, service: MemoryService
) -> None:
    system, store = hash_system, hash_system.records
    stored = [service.store_experience(note).memory_id for note in NOTES]
    every: Callable[[], list[str]] = lambda: [*_ids(store), *stored]  # noqa: E731 - deleted ids too
    _same(store, every())  # the cache now holds every row and link list

    writes: list[tuple[str, Callable[[], object]]] = [
        ("store", lambda: service.store_experience("The deploy pipeline now also builds the docs")),
        (
            "edit",
            lambda: system.edits.update(stored[0], MemoryEdit(text="The deploy pipeline runs on Buildkite")),
        ),
        ("importance", lambda: system.edits.update(stored[1], MemoryEdit(importance_score=0.9, tags=["db"]))),
        (
            "recall and its bookkeeping",
            lambda: (service.retrieve_memories("deploy pipeline"), system.flush()),
        ),
        ("link", lambda: service.link_memories(stored[3], stored[4], "relates_to")),
        ("unlink", lambda: service.unlink_memories(stored[3], stored[4])),
        ("forget", lambda: service.forget_memories([stored[5]])),
        ("undo", lambda: service.undo([stored[5]])),
        ("delete", lambda: service.delete_memories([stored[2]])),
        ("consolidate", lambda: service.consolidate(apply=True, threshold=0.5)),
        (
            "import",
            lambda: service.import_memories(io.BytesIO("\n".join(service.export_memories()).encode())),
        ),
    ]
    for name, write in writes:
        write()
        _same(store, every(), after=name)


def test_a_write_by_another_process_is_seen(
    hash_system: CognitiveSystem, service: MemoryService, data_dir: Path
) -> None:
    store = hash_system.records
    stored = [service.store_experience(note).memory_id for note in NOTES]
    _same(store, stored)
    other = SQLiteMemoryStore(store.path)
    try:
        other.links.link((stored[0], stored[5], "relates_to"), None, "s2")
        other.memories.record_access([stored[1]], hash_system.now(), co_recalled=[(stored[1], stored[2])])
    finally:
        other.close()

    _same(store, stored)
    graph, _ = _cached(store, stored)[1]
    assert stored[5] in dict(graph[stored[0]])  # type: ignore[index]


def test_a_cache_further_behind_than_the_log_keeps_starts_again(
    hash_system: CognitiveSystem, service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recall_cache, "KEPT", 2)
    store = hash_system.records
    stored = [service.store_experience(note).memory_id for note in NOTES]
    _same(store, stored)

    for memory_id in stored:  # more changes than the log keeps
        hash_system.edits.update(memory_id, MemoryEdit(importance_score=0.8))

    assert store.database.rows("SELECT count(*) FROM recall_changes")[0][0] <= 3
    _same(store, stored)


def test_reads_inside_a_write_transaction_see_its_changes_and_are_not_kept(
    hash_system: CognitiveSystem, service: MemoryService
) -> None:
    store = hash_system.records
    stored = [service.store_experience(note).memory_id for note in NOTES[:2]]
    _same(store, stored)

    class Undone(Exception):
        pass

    with pytest.raises(Undone), store.database.transaction() as conn:
        conn.execute("UPDATE memories SET importance_score = 0.01 WHERE id = ?", (stored[0],))
        inside = store.memories.ranking_rows(stored)
        raise Undone

    for _ in range(3):  # the log moves past where it stood inside the undone transaction
        hash_system.edits.update(stored[1], MemoryEdit(importance_score=0.7))
    assert inside[0].importance_score == pytest.approx(0.01)
    _same(store, stored)
    assert store.memories.ranking_rows(stored)[0].importance_score != pytest.approx(0.01)
