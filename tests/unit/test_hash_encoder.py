"""The deterministic stand-in encoder used for plumbing tests."""

from __future__ import annotations

import numpy as np
import pytest

from cognitive_memory.encoding import Encoder, HashEncoder


def test_vectors_have_one_row_per_text_and_the_dimension_columns() -> None:
    vectors = HashEncoder().encode(["one", "two words", "three more words"])

    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32


def test_the_same_text_always_gives_the_same_vector() -> None:
    text = "The deploy script needs the AWS profile set"

    first = HashEncoder().encode([text])
    second = HashEncoder().encode(["something else", text])[1:]

    np.testing.assert_array_equal(first, second)


def test_every_vector_is_unit_length() -> None:
    vectors = HashEncoder().encode(["a", "many many repeated words words words", "Ünïcödé tökens"])

    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)


def test_texts_sharing_words_are_more_similar_than_unrelated_texts() -> None:
    query, related, unrelated = HashEncoder().encode(
        ["deploy script AWS profile", "the deploy script reads the AWS profile", "simmer tomato sauce slowly"]
    )

    assert float(query @ related) > 0.5
    assert float(query @ related) > float(query @ unrelated) + 0.4


def test_case_and_punctuation_do_not_change_the_vector() -> None:
    upper, lower = HashEncoder().encode(["Deploy, Script!", "deploy script"])

    np.testing.assert_allclose(upper, lower)


@pytest.mark.parametrize("text", ["", "!!! ---", "   "], ids=["empty", "punctuation", "spaces"])
def test_text_without_tokens_still_gives_a_unit_vector(text: str) -> None:
    vector = HashEncoder().encode([text])[0]

    assert float(np.linalg.norm(vector)) == pytest.approx(1.0)
    assert np.count_nonzero(vector) == 1


def test_text_without_tokens_gives_the_same_vector_wherever_it_sits_in_the_batch() -> None:
    encoder = HashEncoder()

    alone = encoder.encode(["!!!"])[0]
    second = encoder.encode(["deploy script", "!!!"])[1]

    np.testing.assert_array_equal(alone, second)


def test_dimension_and_name_follow_the_constructor() -> None:
    encoder = HashEncoder(64)

    assert (encoder.dimension, encoder.name) == (64, "hash-64")
    assert encoder.encode(["x"]).shape == (1, 64)
    assert encoder.is_ready
    assert isinstance(encoder, Encoder)
