"""The conversation stage (retrieval/conversation.py): speakers named by a query, answers given a
share of their question's relevance, and the links the floor follows between turns."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from cognitive_memory.core.ranking import RankingRow
from cognitive_memory.retrieval.conversation import (
    ConversationStage,
    floor_graph,
    names_speaker,
    pass_to_answers,
    query_names,
)


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


def test_an_answer_receives_its_share_of_the_questions_relevance() -> None:
    passed = pass_to_answers({}, {"q": 0.8, "other": 0.5}, {"q": "a"}, share=0.4)
    assert passed == {"a": pytest.approx(0.32)}
    assert pass_to_answers({}, {"q": 0.8}, {"q": "q"}, share=0.4) == {}  # never to itself


def test_an_answer_keeps_a_larger_spread_activation() -> None:
    passed = pass_to_answers({"a": 0.5, "b": 0.1}, {"q": 0.8}, {"q": "a"}, share=0.4)
    assert passed == {"a": pytest.approx(0.5), "b": pytest.approx(0.1)}


def test_questions_without_relevance_or_a_zero_share_pass_nothing() -> None:
    assert pass_to_answers({}, {}, {"q": "a"}, share=0.4) == {}
    assert pass_to_answers({"b": 0.2}, {"q": 0.9}, {"q": "a"}, share=0.0) == {"b": pytest.approx(0.2)}


# q asks, a answers (a turn too), n is a note; q-a and q-n are linked in time and by co-recall.
GRAPH = {"q": [("a", 1.0), ("n", 1.0)], "n": [("q", 1.0)], "a": [("q", 1.0)]}
TIMELESS = {"q": [("n", 0.3)], "n": [("q", 0.3)]}


def test_the_floor_follows_every_link_between_turns_and_none_in_time_to_a_note() -> None:
    followed = floor_graph(GRAPH, TIMELESS, turns={"q", "a"})
    assert followed == {"q": [("a", 1.0), ("n", 0.3)], "n": [("q", 0.3)], "a": [("q", 1.0)]}


def test_without_turns_the_floor_follows_only_links_that_are_not_in_time() -> None:
    assert floor_graph(GRAPH, TIMELESS, turns=set()) == TIMELESS


class _Links:
    """The one read the conversation stage makes: the answers of question turns."""

    def __init__(self, answers: dict[str, str]) -> None:
        self._answers = answers
        self.asked: list[list[str]] = []

    def answers(self, ids: Sequence[str]) -> dict[str, str]:
        self.asked.append(list(ids))
        return {question: answer for question, answer in self._answers.items() if question in ids}


def _row(memory_id: str, speaker: str | None) -> RankingRow:
    vector = np.zeros(2, dtype=np.float32)
    return RankingRow(
        memory_id, 0.5, 0, 0.0, 0.0, None, vector, "default", 2, "episodic", "[]", speaker, frozenset()
    )


def test_the_stage_reads_the_answers_of_its_candidates_and_passes_them_relevance() -> None:
    links = _Links({"q": "a"})
    stage = ConversationStage.read("What did Ana paint?", ["q", "x"], links, share=0.4)
    assert links.asked == [["q", "x"]]
    assert stage.answered({}, {"q": 0.5}) == {"a": pytest.approx(0.2)}
    assert stage.speaker_named(_row("q", "Ana")) and not stage.speaker_named(_row("n", None))
    rows = [_row("q", "Ana"), _row("a", "Ben"), _row("n", None)]
    assert stage.floor_graph(GRAPH, TIMELESS, rows) == floor_graph(GRAPH, TIMELESS, {"q", "a"})


def test_a_stage_with_no_share_for_answers_reads_none() -> None:
    links = _Links({"q": "a"})
    stage = ConversationStage.read("anything", ["q"], links, share=0.0)
    assert links.asked == []
    assert stage.answered({"b": 0.1}, {"q": 0.9}) == {"b": pytest.approx(0.1)}


def test_the_stage_off_treats_turns_as_any_memory() -> None:
    off = ConversationStage.off()
    assert not off.speaker_named(_row("q", "Ana"))
    assert off.answered({"b": 0.1}, {"q": 0.9}) == {"b": pytest.approx(0.1)}
    assert off.floor_graph(GRAPH, TIMELESS, [_row("q", "Ana"), _row("a", "Ben")]) == TIMELESS
