"""Who said a memory: the speaker recorded at store time, and the query words that name it."""

from __future__ import annotations

import pytest

from cognitive_memory.retrieval.speakers import names_speaker, query_names


def test_query_names_are_its_lower_cased_words() -> None:
    words = {"where", "did", "ana", "s", "friend", "ben", "go"}
    assert query_names("Where did Ana's friend BEN go?") == words
    assert query_names("?!") == frozenset()


@pytest.mark.parametrize(
    ("speaker", "query", "named"),
    [
        pytest.param("Ana", "What did ana say about Lisbon?", True, id="case-insensitive"),
        pytest.param("Ana Lima", "Where does Lima live?", True, id="any-word-of-the-name"),
        pytest.param("Chloé", "chloé's plans", True, id="accents"),
        pytest.param("Ana", "What did Anabel say?", False, id="whole-words-only"),
        pytest.param(None, "warning: what did Ana say?", False, id="no-recorded-speaker"),
        pytest.param("", "anything", False, id="empty-speaker"),
    ],
)
def test_a_query_names_a_recorded_speaker_by_any_word_of_the_name(
    speaker: str | None, query: str, named: bool
) -> None:
    assert names_speaker(speaker, query_names(query)) is named
