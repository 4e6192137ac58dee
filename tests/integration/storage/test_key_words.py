"""A memory's key's words are its own (``core/terms.keyed_text``): in its lexical entry, its kept
terms, the vocabulary and document frequencies, and its sparse word vector; migration 0022 gives
them to the keyed memories of a store made before, and the outbox replay at start-up to its index."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from cognitive_memory.core.terms import terms
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.main import build_system
from cognitive_memory.service import MemoryService
from cognitive_memory.settings import Settings
from cognitive_memory.storage import associations, migrations, vocabulary, word_documents
from cognitive_memory.system import CognitiveSystem

DECISION = "We picked PostgreSQL over MySQL for the ledger."
TALK = [f"Database choice notes {n}: the database choice for service {n} is open." for n in range(4)]
COUNTS = (
    "SELECT 'v', term, memories FROM vocabulary "
    "UNION ALL SELECT 'd', term, memories FROM document_frequencies "
    "UNION ALL SELECT 'x', variant, term FROM vocabulary_deletes "
    "UNION ALL SELECT 'n', key, value FROM store_meta WHERE key = 'word_documents' ORDER BY 1, 2, 3"
)
KEPT = "SELECT w.terms FROM memory_words w JOIN memories m ON m.rowid = w.memory_rowid WHERE m.id = ?"
ENTRY = "SELECT f.content FROM memory_fts f JOIN memories m ON m.rowid = f.rowid WHERE m.id = ?"
# Memories the lexical index finds by a word of their key that their text never says.
BY_KEY_WORD = (
    "SELECT m.id FROM memory_fts f JOIN memories m ON m.rowid = f.rowid "
    "WHERE memory_fts MATCH 'content : choice' AND m.content NOT LIKE '%choice%'"
)


def filled(system: CognitiveSystem) -> str:
    """Store the talk (in a session, so it has neighbours in time) and, alone, the keyed decision
    (no link reaches it: only its words find it by a word of its key); its id."""
    for text in TALK:
        system.store(text, session_id="s")
    keyed = system.store(DECISION, key="database-choice").memory.id
    system.store("Plain memory with no key at all.", key=None, session_id="s")
    return keyed


def rows(path: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(path)) as conn:
        return [tuple(row) for row in conn.execute(sql, params)]


def recount(path: Path, copy: Path) -> list[tuple[object, ...]]:
    """The counts ``vocabulary.rebuild`` makes from the kept terms (of a copy of the store)."""
    with closing(sqlite3.connect(path)) as source, closing(sqlite3.connect(copy)) as target:
        source.backup(target)
    with closing(sqlite3.connect(copy, isolation_level=None)) as conn:
        conn.execute("BEGIN")
        vocabulary.rebuild(conn)
        conn.execute("COMMIT")
    return rows(copy, COUNTS)


def recalled(system: CognitiveSystem, query: str) -> list[str]:
    body = MemoryService(system).retrieve_memories(query, include_bridges=False)
    return [m.id for m in [*body.memories.core, *body.memories.peripheral]]


def test_a_keyed_memorys_words_hold_its_key_and_the_counts_follow_a_change_of_key(
    hash_system: CognitiveSystem, tmp_path: Path
) -> None:
    keyed = filled(hash_system)
    path = hash_system.records.path
    held = rows(path, KEPT, keyed)
    matched = rows(path, BY_KEY_WORD)
    hash_system.edits.change_key(hash_system.records.memories.get([keyed])[0], "ledger-store")
    changed = rows(path, COUNTS)

    assert held == [(" ".join(sorted(set(terms(DECISION + " database-choice")))),)]
    assert matched == [(keyed,)]
    assert changed == recount(path, tmp_path / "copy.db")
    assert ("v", "choic", 4) in changed and (
        "v",
        "store",
        1,
    ) in changed  # the talk holds choice; the key, store


def test_a_store_made_before_0022_gets_its_keys_words_and_its_index_too(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = migrations.MIGRATIONS
    assert shipped[21][0] == "0022_key_words"
    with monkeypatch.context() as before:  # the release before: keys are not words
        before.setattr(migrations, "MIGRATIONS", shipped[:21])
        before.setattr(associations, "keyed_text", lambda content, key: content)
        before.setattr(word_documents, "keyed_text", lambda content, key: content)
        old = build_system(Settings(env_file=None), encoder=HashEncoder())
        try:
            keyed = filled(old)
            missed = recalled(old, "choice")
        finally:
            old.close()
    path = data_dir / "cognitive_memory.db"
    assert keyed not in missed
    assert rows(path, "SELECT count(*) FROM schema_migrations WHERE name = '0022_key_words'") == [(0,)]

    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        by_word = recalled(system, "choice")
        by_key = recalled(system, "Database-Choice")
        outbox = system.records.outbox.pending()
    finally:
        system.close()

    assert keyed in by_word and by_key[0] == keyed
    assert outbox == []  # replayed into the index at start-up
    assert rows(path, COUNTS) == recount(path, tmp_path / "copy.db")
    held = rows(path, KEPT, keyed)
    assert held == [(" ".join(sorted(set(terms(DECISION + " database-choice")))),)]
    assert rows(path, ENTRY, keyed) == [(DECISION + "\ndatabase-choice",)]
