"""Input rules: every violation is an InvalidInputError with a machine-readable code."""

from __future__ import annotations

from typing import Any

import pytest

from cognitive_memory.core.validation import (
    MAX_TAG_CHARS,
    MAX_TAGS,
    MAX_TEXT_CHARS,
    check_importance,
    check_key,
    check_metadata,
    check_session,
    check_tags,
    check_text,
)
from cognitive_memory.errors import InvalidInputError

METADATA_LIMIT = 64_000


@pytest.mark.parametrize(
    ("text", "code"),
    [
        pytest.param("", "empty_text", id="empty"),
        pytest.param("  \n\t ", "empty_text", id="whitespace"),
        pytest.param("x" * (MAX_TEXT_CHARS + 1), "text_too_long", id="one-over-the-limit"),
        pytest.param("bad \ud800 char", "invalid_text", id="lone-surrogate"),
        pytest.param(42, "invalid_type", id="not-a-string"),
    ],
)
def test_unusable_text_is_refused_with_a_code(text: Any, code: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        check_text(text)

    assert caught.value.code == code


def test_text_is_stripped() -> None:
    assert check_text("  keep the middle  \n") == "keep the middle"


def test_text_is_composed_so_one_text_typed_two_ways_is_one_text() -> None:
    decomposed = "Cafe\u0301 cre\u0300me in Ko\u0308ln"  # e + combining accent, as macOS files spell it

    assert check_text(decomposed) == "Café crème in Köln" == check_text("Café crème in Köln")
    assert check_text("e\u0301" * 5, limit=5) == "é" * 5  # the limit counts composed characters


def test_text_at_the_limit_is_accepted_and_padding_does_not_count() -> None:
    text = "x" * MAX_TEXT_CHARS

    assert check_text(f"   {text}\n") == text


def test_a_custom_limit_and_field_name_appear_in_the_error() -> None:
    with pytest.raises(InvalidInputError) as caught:
        check_text("abcdef", field="query", limit=5)

    assert caught.value.code == "text_too_long"
    assert "`query`" in caught.value.message


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(0, 0.0, id="zero-int"),
        pytest.param(1, 1.0, id="one-int"),
        pytest.param(0.25, 0.25, id="float"),
    ],
)
def test_importance_in_range_is_returned_as_float(value: float, expected: float) -> None:
    result = check_importance(value)

    assert result == expected
    assert type(result) is float


@pytest.mark.parametrize(
    ("value", "code"),
    [
        pytest.param(-0.1, "out_of_range", id="negative"),
        pytest.param(1.5, "out_of_range", id="above-one"),
        pytest.param(2, "out_of_range", id="int-two"),
        pytest.param(float("nan"), "invalid_type", id="nan"),
        pytest.param(float("inf"), "invalid_type", id="infinity"),
        pytest.param(True, "invalid_type", id="bool"),
        pytest.param("0.5", "invalid_type", id="string"),
    ],
)
def test_bad_importance_is_refused_with_a_code(value: Any, code: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        check_importance(value)

    assert caught.value.code == code


def test_tags_are_stripped_deduplicated_in_order_and_empties_dropped() -> None:
    assert check_tags(["  docker ", "ci", "docker", "", "   ", "ci ", "python"]) == ("docker", "ci", "python")


def test_up_to_the_maximum_number_of_distinct_tags_is_accepted() -> None:
    tags = [f"tag{n}" for n in range(MAX_TAGS)]

    assert check_tags([*tags, *tags]) == tuple(tags)


def test_more_distinct_tags_than_the_maximum_are_refused() -> None:
    with pytest.raises(InvalidInputError) as caught:
        check_tags([f"tag{n}" for n in range(MAX_TAGS + 1)])

    assert caught.value.code == "too_many_tags"


@pytest.mark.parametrize(
    ("tags", "code"),
    [
        pytest.param(["x" * (MAX_TAG_CHARS + 1)], "text_too_long", id="tag-too-long"),
        pytest.param(["ok", 7], "invalid_type", id="not-a-string"),
        pytest.param(["bad\ud800"], "invalid_text", id="lone-surrogate"),
    ],
)
def test_bad_tags_are_refused_with_a_code(tags: list[Any], code: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        check_tags(tags)

    assert caught.value.code == code


def test_no_metadata_is_an_empty_object() -> None:
    assert check_metadata(None) == {}


def test_plain_json_metadata_with_unicode_is_kept() -> None:
    metadata = {"project": "café ☕", "nested": {"n": [1, 2.5, None, True]}}

    assert check_metadata(metadata) == metadata


@pytest.mark.parametrize(
    ("metadata", "code"),
    [
        pytest.param({"ids": {1, 2}}, "invalid_metadata", id="set-value"),
        pytest.param({"score": float("nan")}, "invalid_metadata", id="nan-value"),
        pytest.param({"text": "bad\ud800"}, "invalid_metadata", id="lone-surrogate"),
        pytest.param({1: "one"}, "invalid_metadata", id="non-string-key"),
        pytest.param(["not", "an", "object"], "invalid_type", id="list"),
        pytest.param({"blob": "x" * METADATA_LIMIT}, "metadata_too_large", id="too-large"),
    ],
)
def test_bad_metadata_is_refused_with_a_code(metadata: Any, code: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        check_metadata(metadata)

    assert caught.value.code == code


def test_metadata_size_limit_counts_utf8_bytes_not_characters() -> None:
    metadata = {"blob": "€" * 30_000}  # 30,000 characters, 90,000 bytes in UTF-8

    with pytest.raises(InvalidInputError) as caught:
        check_metadata(metadata)

    assert caught.value.code == "metadata_too_large"


def test_a_key_is_one_word_kept_in_lower_case() -> None:
    assert check_key("  Coding-Style ") == "coding-style"
    assert check_key("team/deploy.day:2") == "team/deploy.day:2"
    assert check_key("Größe") == "grösse"  # case folding: ß is ss


@pytest.mark.parametrize(
    "spelling",
    ["café", "cafe\u0301", "CAFÉ", "ＣＡＦＥ\u0301", " Café "],
    ids=["nfc", "nfd", "upper", "fullwidth", "spaced"],
)
def test_a_key_is_folded_so_every_spelling_of_it_is_one(spelling: str) -> None:
    assert check_key(spelling) == "café"


def test_a_key_whose_folding_leaves_a_combining_mark_is_taken() -> None:
    assert check_key("İstanbul") == "i\u0307stanbul"


def test_a_key_over_100_characters_once_folded_is_refused_saying_so() -> None:
    with pytest.raises(InvalidInputError, match=r"\(120 once folded\)"):
        check_key("\u3300" * 30)  # ㌀: one character, four once folded (アパート)


@pytest.mark.parametrize("key", ["", "   ", "coding style", "a\nb", "x" * 101, "semi;colon", 7])
def test_a_key_with_spaces_punctuation_or_over_100_characters_is_refused(key: Any) -> None:
    with pytest.raises(InvalidInputError) as caught:
        check_key(key)
    assert caught.value.code == "invalid_value"


def test_a_session_keeps_its_case_and_current_names_no_session() -> None:
    assert check_session(" Nightly-7 ") == "Nightly-7"
    for refused in ("current", "two words", ""):
        with pytest.raises(InvalidInputError):
            check_session(refused)
