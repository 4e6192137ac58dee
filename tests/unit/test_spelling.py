"""The pure rules of spelling correction: edit distance, the delete index's spellings, which near
spellings become corrections, and their weights."""

from __future__ import annotations

import pytest

from cognitive_memory.core.spelling import (
    DOMINANT,
    MAX_CORRECTIONS,
    WEIGHTS,
    QueryTerms,
    QueryWord,
    allowed_distance,
    beginnings,
    corrections,
    deletes,
    edit_distance,
    indexed,
    insertions,
    repairable,
    repaired,
    repairs,
)


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [
        ("python", "python", 0),
        ("pyton", "python", 1),  # a letter dropped
        ("pythhon", "python", 1),  # doubled
        ("pyhton", "python", 1),  # two neighbours swapped: one edit
        ("pythom", "python", 1),  # a neighbouring key
        ("postgrsql", "postgresql", 1),
        ("contxt", "context", 1),
        ("kubrnetse", "kubernetes", 2),
        ("seperate", "separate", 1),  # a vowel for a vowel
        ("regard", "reward", 2),  # a far key: not a typo of it
        ("abc", "xyz", 4),  # past the limit
    ],
)
def test_edit_distance_counts_drops_doubles_swaps_and_near_keys_as_one_edit(
    a: str, b: str, distance: int
) -> None:
    assert edit_distance(a, b, limit=3) == distance
    assert edit_distance(b, a, limit=3) == distance


def test_edit_distance_stops_past_its_limit() -> None:
    assert edit_distance("scheduler", "dispatcher", limit=2) == 3
    assert edit_distance("a", "abcdef", limit=1) == 2  # lengths alone exceed it


def test_deletes_are_every_spelling_with_up_to_depth_letters_dropped() -> None:
    assert deletes("abcd", 1) == {"bcd", "acd", "abd", "abc"}
    assert "ad" in deletes("abcd", 2)
    assert all(len(variant) >= 2 for variant in deletes("abc", 3))


def test_the_index_side_and_the_query_side_meet_on_a_shared_spelling() -> None:
    # A substitution: both drop the changed letter; a swap: both drop one of the two letters.
    assert ({"pyton"} | deletes("pyton", 1)) & ({"python"} | deletes("python", 1))
    assert deletes("pyhton", 1) & deletes("python", 1)


@pytest.mark.parametrize(
    ("term", "distance"),
    [("cat", 0), ("pyto", 0), ("pyton", 1), ("postgrs", 1), ("postgrsq", 2), ("h2o2o", 0), ("cafés", 0)],
)
def test_short_terms_are_never_corrected_and_long_ones_may_be_two_edits_away(
    term: str, distance: int
) -> None:
    assert allowed_distance(term) == distance


def test_only_terms_of_letters_a_to_z_go_in_the_delete_index() -> None:
    assert indexed("python")
    assert not indexed("py")
    assert not indexed("v2")
    assert not indexed("x" * 65)


def test_an_unknown_term_gains_its_nearest_spellings_most_held_first_below_weight_one() -> None:
    near = {"python": 40, "pytons": 3, "pylon": 50, "photon": 9, "pythonic": 12}
    found = corrections("pyton", 0, near)
    assert found == (("python", WEIGHTS[1]), ("pytons", WEIGHTS[1]))  # pylon: a far key; photon: two edits
    assert all(weight < 1.0 for _, weight in found)


def test_two_edits_weigh_less_than_one_and_are_used_only_when_nothing_is_nearer() -> None:
    assert corrections("kubrnetse", 0, {"kubernetes": 5}) == (("kubernetes", WEIGHTS[2]),)
    assert corrections("kubernetse", 0, {"kubernetes": 5, "kubernetesx": 5}) == (("kubernetes", WEIGHTS[1]),)
    assert WEIGHTS[2] < WEIGHTS[1] < 1.0


def test_a_term_the_store_holds_often_is_never_corrected() -> None:
    assert corrections("forms", 50, {"farms": 5000}) == ()


def test_a_term_held_once_is_corrected_only_towards_a_spelling_held_far_more_often() -> None:
    assert corrections("pyton", 1, {"python": DOMINANT}) == (("python", WEIGHTS[1]),)
    assert corrections("pyton", 1, {"python": DOMINANT - 1}) == ()


def test_at_most_max_corrections_are_kept() -> None:
    near = {f"battz{letter}": 10 + n for n, letter in enumerate("abcdefgh")}
    assert len(corrections("battz", 0, near)) == MAX_CORRECTIONS


def test_query_terms_pairs_keep_each_term_once_at_its_highest_weight() -> None:
    terms = QueryTerms(
        (
            QueryWord("pyton", (("pyton", 1.0), ("python", 0.7))),
            QueryWord("python", (("python", 1.0),)),
        )
    )
    assert terms.pairs() == [("pyton", 1.0), ("python", 1.0)]
    assert terms.corrected
    assert not QueryTerms.exact(["python"]).corrected


def test_a_typed_word_of_five_letters_or_more_is_repaired_whatever_its_stem() -> None:
    # "tokns" stems to "tokn": too short a stem to correct, but a word of five letters.
    assert repairable("tokns") and not allowed_distance("tokn")
    assert not repairable("tokn") and not repairable("v2ray") and not repairable("cafés")


def test_repairs_swap_neighbours_and_undouble_letters_past_the_first() -> None:
    assert "kubernetes" in repairs("kubernetse")
    assert "redis" in repairs("reddis")
    assert "celery" in repairs("celeery")
    assert all(repair[0] == "k" for repair in repairs("kubernetse"))  # the first letter stays
    assert "tokns" not in repairs("tokns") and repairs("tokn") == set()


def test_beginnings_run_from_four_letters_to_the_whole_word() -> None:
    assert beginnings("tokns") == ["tokn", "tokns"]
    assert beginnings("tokn") == []


def test_a_lost_letter_goes_back_where_the_term_the_index_offered_has_it() -> None:
    # The index keeps "token" under "tokn" (its "e" dropped): the "e" goes back after "tok".
    assert insertions("tokns", "tokn", "token") == {"tokens"}
    assert insertions("custmer", "custm", "custom") == {"customer"}
    assert insertions("prsma", "prsma", "prisma") == {"prisma"}


def test_a_letter_lost_past_a_whole_term_is_tried_letter_by_letter_in_the_suffix() -> None:
    tried = insertions("paginaton", "pagin", "pagin")
    assert "pagination" in tried
    assert all(word.startswith("pagin") and len(word) == len("paginaton") + 1 for word in tried)
    assert insertions("tokns", "tokn", "tokn") == set()  # a beginning of four letters: too short
    assert insertions("pagin", "pagin", "pagin") == set()  # nothing past it


def test_a_repair_counts_only_towards_a_term_held_far_more_often_than_the_word_typed() -> None:
    assert repaired(0, {"token": 3, "toke": 0}) == (("token", WEIGHTS[1]),)
    assert repaired(1, {"token": DOMINANT}) == (("token", WEIGHTS[1]),)
    assert repaired(1, {"token": DOMINANT - 1}) == ()
    assert repaired(2, {"token": 1000}) == ()  # a word the store holds is never changed
    assert len(repaired(0, {f"term{letter}": 5 for letter in "abcdefgh"})) == MAX_CORRECTIONS
