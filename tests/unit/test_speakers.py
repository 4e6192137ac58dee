"""Who said a memory: the leading "Name:" label, and the words of a query that could name it."""

from __future__ import annotations

import pytest

from cognitive_memory.retrieval.speakers import query_names, speaker


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param("Ana: I moved to Lisbon.", "ana", id="plain-label"),
        pytest.param("[10:32] BEN: see you at nine", "ben", id="after-a-bracketed-stamp"),
        pytest.param("  [8 May 2023]  Chloé:\tyes", "chloé", id="spaces-tab-and-accents"),
        pytest.param("Note: the build is green", "note", id="any-single-word-label"),
        pytest.param("See https://example.org: it helps", None, id="not-at-the-start"),
        pytest.param("https://example.org is down", None, id="url-scheme-is-no-label"),
        pytest.param("Ana Lima: hello", None, id="two-words-are-no-label"),
        pytest.param("The ratio was 3:1", None, id="no-label"),
        pytest.param("", None, id="empty"),
    ],
)
def test_speaker_is_the_leading_one_word_label(content: str, expected: str | None) -> None:
    assert speaker(content) == expected


def test_query_names_are_its_lower_cased_words() -> None:
    words = {"where", "did", "ana", "s", "friend", "ben", "go"}
    assert query_names("Where did Ana's friend BEN go?") == words
    assert query_names("?!") == frozenset()
