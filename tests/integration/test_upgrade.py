"""A store made before projects (migrations 0001-0005) opens with every memory in `default`, its
content key filled and its index payload rewritten, so the project filter finds it; one made
before 0013 has its speaker, origin and source kind moved from metadata to their columns."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest

from cognitive_memory import linking
from cognitive_memory.core.memory import SourceKind
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.index.vector_store import VectorFilter
from cognitive_memory.lifecycle import forgetting
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from cognitive_memory.storage import migrations
from cognitive_memory.storage.relations import USER_LINK_WEIGHT

OLD_ID = "0c9f5a52-7d1e-4c1b-9a0e-3f1f2b6c8d10"
SECOND_ID = "1c9f5a52-7d1e-4c1b-9a0e-3f1f2b6c8d10"
THIRD_ID = "2c9f5a52-7d1e-4c1b-9a0e-3f1f2b6c8d10"
FOURTH_ID = "3c9f5a52-7d1e-4c1b-9a0e-3f1f2b6c8d10"
TRASHED_ID = "4c9f5a52-7d1e-4c1b-9a0e-3f1f2b6c8d10"
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


def _old_memory(conn: sqlite3.Connection, memory_id: str, text: str, metadata: dict[str, object]) -> None:
    """A memory as releases before 0013 stored it: its source kind in ``loader_type`` and in
    ``metadata``, its speaker and source path only in ``metadata``."""
    vector = HashEncoder().encode([text])[0].astype("<f4").tobytes()
    conn.execute(OLD_INSERT.replace("'{}', '[]'", "?, '[]'"), (memory_id, text, json.dumps(metadata), vector))
    loader = metadata.get("loader_type")
    conn.execute("UPDATE memories SET loader_type = ? WHERE id = ?", (loader, memory_id))
    conn.execute(
        "INSERT INTO memory_fts (rowid, content, context) SELECT rowid, content, '' FROM memories "
        "WHERE id = ?",
        (memory_id,),
    )


TURN_ID = "1d2e3f40-5a6b-4c7d-8e9f-a0b1c2d3e4f5"
NOTE_ID = "2e3f4051-6b7c-4d8e-9fa0-b1c2d3e4f5a6"
ODD_ID = "3f405162-7c8d-4e9f-a0b1-c2d3e4f5a6b7"


def test_an_old_store_moves_speaker_origin_and_source_kind_out_of_metadata(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_old_store(data_dir / "cognitive_memory.db", "An old memory", monkeypatch, applied=12)
    conn = sqlite3.connect(data_dir / "cognitive_memory.db", isolation_level=None)
    _old_memory(conn, TURN_ID, "Ada: shall we ship on Friday?", {"source_info": "chat", "speaker": "Ada"})
    note = {"loader_type": "markdown", "source_path": "/notes/ship.md", "title": "Ship", "section": "Ship"}
    _old_memory(conn, NOTE_ID, "# Ship\nShip on Fridays.", note)
    odd = {"loader_type": "custom", "speaker": 7, "source_path": ["a"], "kept": True}
    _old_memory(conn, ODD_ID, "A memory a script stored with odd metadata", odd)
    conn.close()

    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        turn, note_memory, odd_memory = system.records.memories.get([TURN_ID, NOTE_ID, ODD_ID])
        (row,) = system.records.memories.ranking_rows([TURN_ID])
    finally:
        system.close()

    assert (turn.source, turn.speaker, turn.origin, dict(turn.metadata)) == (
        SourceKind.BY_HAND,
        "Ada",
        None,
        {"source_info": "chat"},
    )
    assert (note_memory.source, note_memory.origin) == (SourceKind.MARKDOWN, "/notes/ship.md")
    assert dict(note_memory.metadata) == {"title": "Ship", "section": "Ship"}
    assert note_memory.shown_metadata == note and turn.shown_metadata == {
        "source_info": "chat",
        "speaker": "Ada",
    }
    # Values no record field holds stay the caller's; the unknown kind is no longer a source kind.
    assert (odd_memory.source, odd_memory.speaker, odd_memory.origin) == (SourceKind.BY_HAND, None, None)
    assert dict(odd_memory.metadata) == odd
    assert row.speaker == "Ada"


def test_a_memory_trashed_before_the_columns_comes_back_with_them(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_old_store(data_dir / "cognitive_memory.db", "An old memory", monkeypatch, applied=12)
    conn = sqlite3.connect(data_dir / "cognitive_memory.db", isolation_level=None)
    note = {"loader_type": "session_lesson", "lesson_type": "rule", "speaker": "Ada", "source_path": "/a.md"}
    _old_memory(conn, TURN_ID, "Always pin the base image.", note)
    row = json.dumps(dict(zip(*_columns(conn, TURN_ID), strict=True)))
    conn.execute(
        "INSERT INTO trash (id, content, project, trashed_at, reason, row, embedding, relations, versions, "
        "connections) SELECT id, content, project, ?, 'forgotten', ?, embedding, '[]', '[]', '[]' "
        "FROM memories WHERE id = ?",
        (time.time(), row, TURN_ID),
    )
    conn.execute("DELETE FROM memory_fts WHERE rowid = (SELECT rowid FROM memories WHERE id = ?)", (TURN_ID,))
    conn.execute("DELETE FROM memories WHERE id = ?", (TURN_ID,))
    conn.close()

    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        system.records.trash.restore([TURN_ID])
        (memory,) = system.records.memories.get([TURN_ID])
    finally:
        system.close()

    assert (memory.source, memory.speaker, memory.origin) == (SourceKind.SESSION_LESSON, "Ada", "/a.md")
    assert dict(memory.metadata) == {"lesson_type": "rule"}
    assert memory.shown_metadata == note


def _columns(conn: sqlite3.Connection, memory_id: str) -> tuple[list[str], list[object]]:
    cursor = conn.execute("SELECT * FROM memories WHERE id = ?", (memory_id,))
    values = cursor.fetchone()
    return [column[0] for column in cursor.description if column[0] != "embedding"], [
        value for column, value in zip(cursor.description, values, strict=True) if column[0] != "embedding"
    ]


def test_a_store_made_before_keys_opens_without_them_and_takes_one(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "The nightly job compacts the event log."
    make_old_store(data_dir / "cognitive_memory.db", text, monkeypatch, applied=13)

    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        (before,) = system.records.memories.get([OLD_ID])
        again = system.store(text, key="Nightly-Job")
        updated = system.store("The nightly job compacts and then archives the event log.", key="nightly-job")
        (after,) = system.records.memories.get([OLD_ID])
    finally:
        system.close()

    assert before.key is None
    assert (again.duplicate, again.memory.id, again.memory.key) == (True, OLD_ID, "nightly-job")
    assert (updated.updated, updated.memory.id, updated.version) == (True, OLD_ID, 1)
    assert (after.key, after.content) == (
        "nightly-job",
        "The nightly job compacts and then archives the event log.",
    )


def test_keys_of_a_store_made_before_folding_are_folded_and_a_clash_leaves_the_later_spelling_unkeyed(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 0018: keys were lower-cased, now folded (NFKC and case folding). The key already
    in its folded form keeps it; the memory whose key folds onto it stays, without a key."""
    db = data_dir / "cognitive_memory.db"
    make_old_store(db, "Street names are written with ss.", monkeypatch, applied=17)
    conn = sqlite3.connect(db, isolation_level=None)
    vector = HashEncoder().encode(["x"])[0].astype("<f4").tobytes()
    keyed = {OLD_ID: "straße", SECOND_ID: "strasse", THIRD_ID: "ｃoding", FOURTH_ID: "deploy-day"}
    for memory_id, key in keyed.items():
        if memory_id != OLD_ID:
            conn.execute(OLD_INSERT, (memory_id, f"Memory {key}", vector))
        conn.execute("UPDATE memories SET memory_key = ? WHERE id = ?", (key, memory_id))
    row = json.dumps({"id": TRASHED_ID, "content": "Trashed.", "memory_key": "Ｒｅｌｅａｓｅ"})
    conn.execute(
        "INSERT INTO trash (id, content, project, trashed_at, reason, row, embedding, relations, "
        "versions, connections) VALUES (?, 'Trashed.', 'default', ?, 'forgotten', ?, ?, '[]', '[]', '[]')",
        (TRASHED_ID, time.time(), row, vector),
    )
    conn.close()

    build_system(Settings(env_file=None), encoder=HashEncoder()).close()

    conn = sqlite3.connect(db)
    keys = dict(conn.execute("SELECT id, memory_key FROM memories").fetchall())
    (trashed,) = conn.execute("SELECT row ->> '$.memory_key' FROM trash").fetchone()
    conn.close()
    assert keys == {OLD_ID: None, SECOND_ID: "strasse", THIRD_ID: "coding", FOURTH_ID: "deploy-day"}
    assert trashed == "release"


def test_a_store_made_before_relation_weights_keeps_its_links_their_weight_and_their_change_log(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = data_dir / "cognitive_memory.db"
    names = [name for name, _ in migrations.MIGRATIONS]
    make_old_store(path, "The deploy runs on Fridays.", monkeypatch, names.index("0019_change_log") + 1)
    triggers = "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'relations'"
    with sqlite3.connect(path) as conn:
        vector = HashEncoder().encode(["x"])[0].astype("<f4").tobytes()
        conn.execute(OLD_INSERT, (SECOND_ID, "The deploy moved to Mondays.", vector))
        conn.execute(
            "INSERT INTO relations (from_id, to_id, relation, note, created_at) "
            "VALUES (?, ?, 'supersedes', 'moved', 1714521600)",
            (SECOND_ID, OLD_ID),
        )
        before = sorted(conn.execute(triggers).fetchall())
    conn.close()

    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        kept = system.records.links.related(OLD_ID, 1, (), 10).found
        edges = system.records.links.neighbours([OLD_ID])
        head = system.records.changes.head()
        linking.link(system.records, OLD_ID, SECOND_ID, "Depends-On", weight=0.4)
        logged = {(c.memory_id, c.kind) for c in system.records.changes.since(head).changes}
        with sqlite3.connect(path) as conn:
            after = sorted(conn.execute(triggers).fetchall())
            with pytest.raises(sqlite3.IntegrityError):
                conn.execute(
                    "INSERT INTO relations (from_id, to_id, relation, created_at) "
                    "VALUES (?, ?, 'Not one', 0)",
                    (OLD_ID, SECOND_ID),
                )
        conn.close()
    finally:
        system.close()

    assert [(n.memory_id, n.relation, n.note, n.weight) for n in kept] == [
        (SECOND_ID, "supersedes", "moved", USER_LINK_WEIGHT)
    ]
    assert edges == {OLD_ID: [(SECOND_ID, USER_LINK_WEIGHT)]}
    assert len(before) == 3 and after == before
    assert {(OLD_ID, "links"), (SECOND_ID, "links")} <= logged
