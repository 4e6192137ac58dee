"""BM25F document weights and query vectors (cognitive_memory/index/sparse.py)."""

from __future__ import annotations

import math

import pytest

from cognitive_memory.core.spelling import QueryTerms, QueryWord
from cognitive_memory.index.sparse import (
    CONTEXT_WEIGHT,
    K1,
    MIN_IDF,
    B,
    SparseVector,
    document_vector,
    drifted,
    idf_factor,
    query_stems,
    query_vector,
    term_id,
    words_query,
)


def _weights(vector: SparseVector) -> dict[int, float]:
    return dict(zip(vector.indices, vector.values, strict=True))


def test_term_ids_are_stable_32_bit_numbers() -> None:
    assert term_id("run") == term_id("run") == 0xFFFFFFFF & term_id("run")
    assert term_id("run") != term_id("walk")
    assert 0 <= term_id("anything") < 2**32


def test_a_document_of_average_length_weighs_a_single_word_one() -> None:
    vector = document_vector(["dog", "bark"], [], average_length=2.0)
    assert _weights(vector) == pytest.approx({term_id("dog"): 1.0, term_id("bark"): 1.0})


def test_neighbours_words_count_context_weight_and_their_whole_length_normalises() -> None:
    own, neighbours = ["dog", "bark"], ["dog", "cat", "cat", "mat"]
    vector = document_vector(own, neighbours, average_length=3.0)

    length = 2 + 4
    norm = K1 * (1 - B + B * length / 3.0)
    dog = 1 + CONTEXT_WEIGHT
    assert _weights(vector)[term_id("dog")] == pytest.approx(dog * (K1 + 1) / (dog + norm))
    cat = 2 * CONTEXT_WEIGHT
    assert _weights(vector)[term_id("cat")] == pytest.approx(cat * (K1 + 1) / (cat + norm))
    assert list(vector.indices) == sorted(vector.indices)


def test_a_longer_document_weighs_the_same_word_less() -> None:
    short = _weights(document_vector(["dog"], [], 4.0))[term_id("dog")]
    long = _weights(document_vector(["dog", "a", "b", "c", "d", "e"], [], 4.0))[term_id("dog")]
    assert long < short


def test_an_empty_text_has_an_empty_vector() -> None:
    assert not document_vector([], [], 5.0)
    assert not query_vector([])


def test_a_query_keeps_each_terms_largest_weight() -> None:
    vector = query_vector([("run", 1.0), ("ran", 0.4), ("run", 0.5), ("skip", 0.0)])
    assert _weights(vector) == {term_id("run"): 1.0, term_id("ran"): 0.4}


def test_an_average_that_moved_more_than_a_tenth_asks_for_new_weights() -> None:
    assert not drifted(10.0, 10.9)
    assert drifted(10.0, 11.5)
    assert drifted(10.0, 8.5)
    assert drifted(0.0, 3.0)


def test_a_recalls_words_are_stemmed_as_the_index_stems_them() -> None:
    assert words_query(QueryTerms.exact(["zeppelins"])) == query_vector([("zeppelin", 1.0)])
    assert not words_query(QueryTerms.exact([]))


def test_a_correction_weighs_its_weight_beside_the_word_as_typed() -> None:
    typed = QueryWord("recieved", (("recieved", 1.0), ("receiv", 0.6)))

    vector = words_query(QueryTerms((typed,)))

    assert _weights(vector) == {term_id("reciev"): 1.0, term_id("receiv"): 0.6}


def test_words_of_a_query_that_stem_alike_weigh_their_term_as_often_as_fts5_scores_it() -> None:
    """FTS5's bm25() scores every word of the query, so ``going`` and ``go`` count the term ``go``
    twice; the same spelling given twice (a correction that is another word as typed) counts once,
    at its larger weight, as the word search takes it (``QueryTerms.pairs``)."""
    query = QueryTerms(
        (
            QueryWord("going", (("going", 1.0),)),
            QueryWord("go", (("go", 1.0),)),
            QueryWord("stresor", (("stresor", 1.0), ("stress", 0.5))),
            QueryWord("stress", (("stress", 1.0),)),
        )
    )

    vector = _weights(words_query(query))

    assert vector == {term_id("go"): 2.0, term_id("stresor"): 1.0, term_id("stress"): 1.0}


def test_the_idf_factor_turns_the_indexs_idf_into_fts5s() -> None:
    total, held = 1000, 9
    x = (total - held + 0.5) / (held + 0.5)

    assert idf_factor(total, held) * math.log(x + 1) == pytest.approx(math.log(x))


def test_a_word_held_by_half_the_store_or_more_weighs_next_to_nothing() -> None:
    def idf(total: int, held: int) -> float:
        """The IDF the index's modifier gives times the factor."""
        held = min(held, total)
        return idf_factor(total, held) * math.log((total - held + 0.5) / (held + 0.5) + 1)

    assert idf(100, 50) == idf(100, 100) == pytest.approx(MIN_IDF)
    assert idf(100, 120) == pytest.approx(MIN_IDF)  # counts read while the store shrank


def test_a_recalls_query_weighs_each_term_by_the_stores_counts() -> None:
    query = QueryTerms.exact(["zeppelins", "harbour"])
    assert query_stems(query) == ["harbour", "zeppelin"]

    vector = _weights(words_query(query, 100, {"zeppelin": 1, "harbour": 40}))

    assert vector[term_id("zeppelin")] == pytest.approx(idf_factor(100, 1))
    assert vector[term_id("harbour")] == pytest.approx(idf_factor(100, 40))
    assert vector[term_id("harbour")] < vector[term_id("zeppelin")] < 1.0
