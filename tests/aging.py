"""A store as a release before the word vectors left it: its points carry only the meaning, and
its database holds no marker that the index has every memory's words."""

from __future__ import annotations

from collections.abc import Sequence

from cognitive_memory.encoding import HashEncoder
from cognitive_memory.index.sparse import SparseVector
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from cognitive_memory.storage.indexed_words import WORDS_COMPLETE, WORDS_THROUGH

# One rare word per memory: a word that finds its memory and no other.
WORDS = (
    "zeppelin",
    "kafka",
    "lentil",
    "harbour",
    "quasar",
    "mongoose",
    "trombone",
    "glacier",
    "saffron",
    "origami",
)


def note(word: str) -> str:
    return f"A note that mentions the {word} once"


def make_old_store(words: Sequence[str] = WORDS, session_id: str = "old") -> list[str]:
    """Store one memory per word in the data directory (one session: they are neighbours in time),
    then take their words out of the index and the marker out of SQLite; returns their ids."""
    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        ids = [system.store(note(word), session_id=session_id).memory.id for word in words]
        system.vectors.update_words(dict.fromkeys(ids, SparseVector()))
        with system.records.database.transaction() as conn:
            conn.execute("DELETE FROM store_meta WHERE key IN (?, ?)", (WORDS_COMPLETE, WORDS_THROUGH))
    finally:
        system.close()
    return ids
