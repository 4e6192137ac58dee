"""The words repository (storage/lexical.py): terms kept beside memories, word shares and weights."""

from __future__ import annotations

from collections.abc import Callable

from cognitive_memory.storage import SQLiteMemoryStore
from tests.integration.storage.stored import stored_memory


def test_a_memory_s_terms_are_kept_beside_it_and_go_with_it(store: SQLiteMemoryStore) -> None:
    store.memories.add([stored_memory("kept", content="Running the nightly backups"), stored_memory("gone")])

    (row,) = store.memories.ranking_rows(["kept"])
    shares = store.words.shares("run backup nightly", [row])
    store.memories.delete(["gone"])

    assert row.terms == frozenset({"run", "the", "nightli", "backup"})
    assert shares == {"kept": 1.0}
    assert store.database.rows("SELECT count(*) FROM memory_words") == [(1,)]


def test_a_memory_whose_terms_were_never_kept_is_read_with_the_terms_of_its_text(
    store: SQLiteMemoryStore,
) -> None:
    store.memories.add([stored_memory("old", content="The blue bucket holds the backups")])
    with store.database.transaction() as conn:
        conn.execute("DELETE FROM memory_words")

    (row,) = store.memories.ranking_rows(["old"])

    assert row.terms == frozenset({"the", "blue", "bucket", "hold", "backup"})
    assert store.words.shares("blue bucket", [row]) == {"old": 1.0}


def test_word_weights_follow_every_write_to_the_lexical_index(
    store: SQLiteMemoryStore, open_store: Callable[[str], SQLiteMemoryStore]
) -> None:
    """Word counts are kept between recalls, but never past a write: another memory holding
    "apple" makes it commoner, so the memory holding only apple gets a smaller share, exactly
    the share a store opened afresh computes."""
    store.memories.add(
        [stored_memory("apple", content="apple pie"), stored_memory("banana", content="banana bread")]
    )
    (row,) = store.memories.ranking_rows(["apple"])
    before = store.words.shares("apple banana", [row])
    assert store.words.shares("apple banana", [row]) == before  # kept, same answer

    store.memories.add([stored_memory("more", content="apple juice")])
    after = store.words.shares("apple banana", [row])
    store.memories.delete(["more"])
    again = store.words.shares("apple banana", [row])
    opened = open_store("memories").words.shares("apple banana", [row])

    assert after["apple"] < before["apple"]
    assert again == before == opened
