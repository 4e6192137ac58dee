"""The relevance floor's pure rule: own evidence, an anchor, activation from memories that passed,
memories the query names by their key."""

from __future__ import annotations

import pytest

from cognitive_memory.retrieval.floor import RelevanceFloor, evidence, passing
from cognitive_memory.retrieval.scoring import RankWeights, word_bonus

FLOOR = RelevanceFloor(word_weight=0.5, anchor=0.5, floor=0.3, activation=0.1, core=0.6)


def test_evidence_is_cosine_plus_weighted_word_share() -> None:
    assert evidence(0.4, 0.6, 0.5) == pytest.approx(0.7)
    assert evidence(-0.1, 0.0, 0.5) == pytest.approx(-0.1)


def test_nothing_passes_when_no_memory_reaches_the_anchor() -> None:
    own = {"a": 0.49, "b": 0.45}
    assert passing(own, {"a": 0.9, "b": 0.9}, FLOOR) == frozenset()


def test_with_an_anchor_a_memory_passes_on_its_own_evidence_or_on_activation_from_passers() -> None:
    own = {"anchor": 0.55, "weak": 0.31, "noise": 0.1, "answer": 0.05, "faint": 0.05}
    linked = {"answer": 0.12, "faint": 0.09}
    assert passing(own, linked, FLOOR) == {"anchor", "weak", "answer"}


def test_a_memory_the_query_names_by_its_key_passes_and_anchors_whatever_its_evidence() -> None:
    own = {"named": 0.05, "weak": 0.31, "noise": 0.1}
    assert passing(own, {}, FLOOR, named=["named"]) == {"named", "weak"}
    assert passing(own, {}, FLOOR) == frozenset()


def test_the_floor_switched_off_lets_everything_through() -> None:
    off = RelevanceFloor(enabled=False)
    assert passing({"a": -1.0}, {}, off) is None


@pytest.mark.parametrize(
    ("share", "bonus"),
    [
        pytest.param(0.0, 0.0, id="no-words"),
        pytest.param(0.5, 0.0, id="half-earns-nothing"),
        pytest.param(0.75, 0.15, id="three-quarters-earn-half"),
        pytest.param(1.0, 0.3, id="every-word-earns-the-weight"),
    ],
)
def test_the_word_bonus_rewards_only_a_memory_holding_most_of_the_query_words(
    share: float, bonus: float
) -> None:
    assert word_bonus(share, RankWeights(words=0.3, words_from=0.5)) == pytest.approx(bonus)
