"""A query's words corrected against the store's vocabulary (storage/corrections.py), and what the
word search, the word shares and a list's text filter make of the corrections."""

from __future__ import annotations

from cognitive_memory.core.spelling import DOMINANT, WEIGHTS, QueryTerms
from cognitive_memory.index.vector_store import VectorFilter
from cognitive_memory.storage import SQLiteMemoryStore
from tests.integration.storage.stored import stored_memory

POSTGRES = "We moved the orders database from MySQL to PostgreSQL last spring."
PYTHON = "Use context managers in Python to close files."
KUBERNETES = "The Kubernetes scheduler places pods on nodes."


def stored(store: SQLiteMemoryStore) -> None:
    store.memories.add(
        [
            stored_memory("postgres", content=POSTGRES),
            stored_memory("python", content=PYTHON),
            stored_memory("kubernetes", content=KUBERNETES),
        ]
    )


def corrections(terms: QueryTerms) -> dict[str, list[tuple[str, float]]]:
    return {word.word: list(word.terms[1:]) for word in terms.words if len(word.terms) > 1}


def test_a_word_the_store_does_not_know_gains_its_near_spellings_below_weight_one(
    store: SQLiteMemoryStore,
) -> None:
    stored(store)

    assert corrections(store.words.query_terms("PostgrSQL")) == {"postgrsql": [("postgresql", WEIGHTS[1])]}
    assert corrections(store.words.query_terms("contxt managers pyton")) == {
        "contxt": [("context", WEIGHTS[1])],
        "pyton": [("python", WEIGHTS[1])],
    }
    kubernetes = store.words.query_terms("Kubernets sheduler")  # "kubernets" stems as "kubernetes"
    assert corrections(kubernetes) == {"sheduler": [("schedul", WEIGHTS[1])]}


def test_a_stem_the_tokenizer_would_cut_again_is_searched_by_a_word_that_gives_it(
    sqlite_store: SQLiteMemoryStore,
) -> None:
    # Porter stems "database" to "databas", and "databas" to "databa": the correction is searched
    # as "database", which finds the stem the store holds.
    stored(sqlite_store)

    assert corrections(sqlite_store.words.query_terms("databse")) == {"databse": [("database", WEIGHTS[1])]}
    assert [memory_id for memory_id, _ in sqlite_store.words.search("orders databse", 10)] == ["postgres"]


def test_known_words_short_words_and_words_with_nothing_near_stay_as_typed(store: SQLiteMemoryStore) -> None:
    stored(store)

    for query in ("PostgreSQL", "the pods", "managing contexts", "zebra crossing", "node"):
        assert not store.words.query_terms(query).corrected, query


def test_the_word_search_finds_a_misspelt_word_and_ranks_the_exact_spelling_first(
    sqlite_store: SQLiteMemoryStore,
) -> None:
    stored(sqlite_store)
    sqlite_store.memories.add([stored_memory("typo", content="Notes on the pytohn packaging guide.")])

    found = dict(sqlite_store.words.search("pytohn python", 10))
    misspelt = dict(sqlite_store.words.search("pyton", 10))

    assert found["typo"] > 0 and found["python"] > 0
    assert "python" in misspelt
    # "pytohn" alone: the memory holding it as typed outranks the one found through a correction.
    assert [memory_id for memory_id, _ in sqlite_store.words.search("pytohn", 10)][0] == "typo"


def test_a_misspelt_word_no_memory_holds_counts_its_correction_whole_in_the_word_share(
    store: SQLiteMemoryStore,
) -> None:
    stored(store)
    (row,) = store.memories.ranking_rows(["postgres"])

    exact = store.words.shares("PostgreSQL", [row])
    misspelt = store.words.shares("PostgrSQL", [row])

    assert exact == {"postgres": 1.0}
    assert misspelt == {"postgres": 1.0}


def test_a_misspelt_word_one_memory_holds_counts_in_the_word_share_at_its_correction_s_weight(
    store: SQLiteMemoryStore,
) -> None:
    """The memory holding the word as typed keeps the whole of it, one holding its correction less."""
    store.memories.add([stored_memory("typo", content="A note on PostgrSQL spelled wrong")])
    store.memories.add([stored_memory(f"pg{n}", content=f"PostgreSQL note {n}") for n in range(DOMINANT)])
    rows = store.memories.ranking_rows(["typo", "pg0"])

    shares = store.words.shares("PostgrSQL", rows)

    assert shares == {"typo": 1.0, "pg0": WEIGHTS[1]}


def test_a_list_text_filter_matches_corrections_and_lists_exact_matches_first(
    store: SQLiteMemoryStore,
) -> None:
    """A word held once, beside a near spelling held DOMINANT times as often, is corrected too;
    the memory holding it as typed (the oldest here) comes first all the same."""
    store.memories.add([stored_memory("typo", content="A note on PostgrSQL spelled wrong")])
    store.memories.add([stored_memory(f"pg{n}", content=f"PostgreSQL note {n}") for n in range(DOMINANT)])
    every = VectorFilter()

    match = store.words.text_match("PostgrSQL notes")
    exact_only = store.words.text_match("PostgreSQL")
    first = store.memories.browse(every, "created", 1, text=match)
    rest = store.memories.browse(every, "created", 100, first.next_cursor, text=match)

    assert match is not None and match.loose is not None
    assert [m.id for m in first.memories] == ["typo"] and first.total == DOMINANT + 1
    assert len(rest.memories) == DOMINANT and "typo" not in {m.id for m in rest.memories}
    assert exact_only is not None and exact_only.loose is None
    assert store.memories.browse(every, "created", 100, text=exact_only).total == DOMINANT


def test_a_typo_that_changes_how_a_word_stems_is_repaired_before_stemming(
    sqlite_store: SQLiteMemoryStore,
) -> None:
    """``tokns`` stems to ``tokn`` (too short to correct as a stem) and ``paginaton`` to itself (far
    from ``pagin``): their repairs ``tokens`` and ``pagination`` stem to terms the store holds."""
    sqlite_store.memories.add(
        [
            stored_memory("jwt", content="API requests carry JWT tokens in the Authorization header."),
            stored_memory("rest", content="The REST endpoint pages its results with cursor pagination."),
        ]
    )

    assert corrections(sqlite_store.words.query_terms("JWT tokns paginaton")) == {
        "tokns": [("token", WEIGHTS[1])],
        "paginaton": [("pagin", WEIGHTS[1])],
    }
    assert [memory_id for memory_id, _ in sqlite_store.words.search("tokns", 10)] == ["jwt"]
    assert not sqlite_store.words.query_terms("JWT tokens pagination").corrected
