"""A store made before projects (migrations 0001-0005) opens with every memory in `default`, its
content key filled and its index payload rewritten, so the project filter finds it."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest

from cognitive_memory import forgetting
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.index.vector_store import VectorFilter
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from cognitive_memory.storage import migrations

OLD_ID = "0c9f5a52-7d1e-4c1b-9a0e-3f1f2b6c8d10"
OLD_INSERT = (
    "INSERT INTO memories (id, content, hierarchy_level, memory_type, created_date, timestamp, "
    "access_count, importance_score, strength, metadata, tags, dimensions, embedding) "
    "VALUES (?, ?, 1, 'semantic', '2024-05-01T00:00:00+00:00', 1714521600, 0, 0.5, 1.0, '{}', '[]', '{}', ?)"
)


def make_old_store(path: Path, text: str, monkeypatch: pytest.MonkeyPatch, applied: int = 5) -> None:
    """A store made by the first ``applied`` migrations, holding ``text`` (in its lexical index)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    shipped = migrations.MIGRATIONS
    monkeypatch.setattr(migrations, "MIGRATIONS", shipped[:applied])
    conn = sqlite3.connect(path, isolation_level=None)
    migrations.apply_migrations(conn)
    vector = HashEncoder().encode([text])[0].astype("<f4").tobytes()
    conn.execute(OLD_INSERT, (OLD_ID, text, vector))
    conn.execute("INSERT INTO memory_fts (rowid, content, context) SELECT rowid, content, '' FROM memories")
    conn.close()
    monkeypatch.setattr(migrations, "MIGRATIONS", shipped)


def test_an_old_store_joins_the_default_project_everywhere(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "The billing service retries webhooks three times."
    make_old_store(data_dir / "cognitive_memory.db", text, monkeypatch)

    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        (memory,) = system.records.memories.get([OLD_ID])
        vector = HashEncoder().encode([text])[0]
        in_default = system.vectors.search(vector, 5, VectorFilter(projects=("default",)))
        elsewhere = system.vectors.search(vector, 5, VectorFilter(projects=("other",)))
        again = system.store("  the billing service retries webhooks three times. ")
    finally:
        system.close()

    assert memory.project == "default"
    assert [hit.id for hit in in_default] == [OLD_ID] and elsewhere == []
    assert np.allclose(memory.cognitive_embedding, vector)
    assert (again.duplicate, again.memory.id) == (True, OLD_ID)


def test_an_old_store_gets_the_terms_of_its_memories_from_its_lexical_index(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_old_store(data_dir / "cognitive_memory.db", "Retrying the webhooks", monkeypatch, applied=8)

    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        (row,) = system.records.memories.ranking_rows([OLD_ID])
    finally:
        system.close()

    assert row.terms == frozenset({"retri", "the", "webhook"})


def test_an_old_store_keeps_its_links_when_they_are_clustered(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 0010 rebuilds `connections` WITHOUT ROWID: every link and weight survives, and
    recall's link read and a memory's forgetting (the cascade) work on the new table."""
    db = data_dir / "cognitive_memory.db"
    make_old_store(db, "The billing service retries webhooks.", monkeypatch, applied=9)
    other = "1d2e3f40-0000-4000-8000-000000000001"
    conn = sqlite3.connect(db, isolation_level=None)
    vector = HashEncoder().encode(["Webhooks are signed."])[0].astype("<f4").tobytes()
    conn.execute(OLD_INSERT.replace("0, 0.5", "0, 0.6"), (other, "Webhooks are signed.", vector))
    conn.executemany(
        "INSERT INTO connections (source_id, target_id, kind, weight, updated_at) VALUES (?, ?, ?, ?, 0)",
        [
            (OLD_ID, other, "temporal", 0.9),
            (other, OLD_ID, "temporal", 0.9),
            (OLD_ID, other, "co_recall", 0.4),
        ],
    )
    conn.close()

    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        graph, timeless = system.records.links.neighbourhood([OLD_ID, other])
        system.delete([other])
        after, _ = system.records.links.neighbourhood([OLD_ID])
    finally:
        system.close()
    with sqlite3.connect(db) as check:
        (sql,) = check.execute("SELECT sql FROM sqlite_master WHERE name = 'connections'").fetchone()
        left = check.execute("SELECT count(*) FROM connections").fetchone()[0]

    assert "WITHOUT ROWID" in sql
    assert graph == {OLD_ID: [(other, 0.9)], other: [(OLD_ID, 0.9)]}
    assert timeless == {OLD_ID: [(other, 0.4)]}
    assert after == {} and left == 0


def test_trash_entries_of_an_old_store_get_numbers_and_stay_restorable(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 0011 numbers the trash's entries (an id may then have several); an entry trashed
    before it is kept, listed and restored as it was."""
    db = data_dir / "cognitive_memory.db"
    text = "The billing service retries webhooks three times."
    make_old_store(db, text, monkeypatch, applied=10)
    conn = sqlite3.connect(db, isolation_level=None)
    cursor = conn.execute("SELECT * FROM memories")
    fields = dict(zip([column[0] for column in cursor.description], cursor.fetchone(), strict=True))
    row = json.dumps({name: value for name, value in fields.items() if name != "embedding"})
    conn.execute(  # what forget wrote before 0011
        "INSERT INTO trash (id, content, project, trashed_at, reason, trashed_by, row, embedding, "
        "relations, versions, connections) VALUES (?, ?, 'default', ?, 'forgotten', NULL, ?, ?, "
        "'[]', '[]', '[]')",
        (OLD_ID, text, time.time(), row, fields["embedding"]),
    )
    conn.execute("DELETE FROM memory_fts")
    conn.execute("DELETE FROM memory_words")
    conn.execute("DELETE FROM memories")
    conn.close()

    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        (entry,), total = system.records.trash.entries(10)
        restored = forgetting.restore(system, [OLD_ID])
        (memory,) = system.records.memories.get([OLD_ID])
    finally:
        system.close()

    assert (entry.entry, entry.id, entry.content, total) == (1, OLD_ID, text, 1)
    assert restored.restored == [(1, OLD_ID)] and memory.content == text
