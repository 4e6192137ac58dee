"""The conversation stage of recall: the signals that apply only to turns.

A turn is a memory stored with a speaker (``context.speaker`` of ``store_memory``, ``--speaker``
of ``memory_system store``): something a person said in a conversation. Three signals read turns
and nothing else:

- **The speaker.** A query that names who said a turn is more likely about what they said than
  about what others said to them (``names_speaker``; the boost's measurement:
  docs/recall-experiments.md). Only recorded speakers count: a note that opens with
  ``Warning:``, ``Note:`` or ``TODO:`` was said by nobody.
- **Answers.** A turn that asks a question passes a share of its relevance to the turn stored
  right after it in its session, whose own words often do not match the query
  (``pass_to_answers``; the store of record finds the pairs, ``LinkReads.answers``).
- **The floor's graph.** Between turns the relevance floor follows every kind of link, links in
  time too: a reply is evidence for the question it answers (``floor_graph``).

``Retriever.retrieve`` builds one ``ConversationStage`` per recall after fusion and calls it at
three points: activation (``answered``), ranking (``speaker_named``) and the floor
(``floor_graph``, ``answered``). A recall whose candidates hold no turn gets nothing from it:
no answers, no speaker named, the floor's graph without links in time. ``ConversationStage.off``
leaves turns to rank as any memory.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from cognitive_memory.core.ranking import RankingRow
from cognitive_memory.retrieval.reading import LinkReads

__all__ = ["ConversationStage", "floor_graph", "names_speaker", "pass_to_answers", "query_names"]

Graph = Mapping[str, Sequence[tuple[str, float]]]

_WORD = re.compile(r"\w+")


def query_names(query: str) -> frozenset[str]:
    """The query's words, lower-cased: the speakers it could name."""
    return frozenset(word.lower() for word in _WORD.findall(query))


def names_speaker(speaker: str | None, names: frozenset[str]) -> bool:
    """True when the query (its ``names``) holds a word of the memory's recorded speaker."""
    if not speaker:
        return False
    return any(word.lower() in names for word in _WORD.findall(speaker))


def pass_to_answers(
    activation: Mapping[str, float],
    relevance: Mapping[str, float],
    answers: Mapping[str, str],
    share: float,
) -> dict[str, float]:
    """Give the memory that answers a question ``share`` of the question's relevance.

    ``answers`` maps a memory that asks a question to the memory stored right after it in its
    session. A question that matches the query points at its answer, whose own words often do
    not (``What inspired the painting?`` is followed by ``A visit to the community center.``).
    An answer keeps the larger of its spread activation and ``share x relevance(question)``.
    """
    passed = dict(activation)
    for question, answer in answers.items():
        energy = share * relevance.get(question, 0.0)
        if answer != question and energy > passed.get(answer, 0.0):
            passed[answer] = energy
    return passed


def floor_graph(graph: Graph, timeless: Graph, turns: set[str]) -> dict[str, Sequence[tuple[str, float]]]:
    """The links the floor follows: every kind between conversation turns; between anything else,
    all but links in time (notes stored one after another in a session are not evidence for
    each other, while a reply is evidence for the question it answers). ``graph`` holds every
    kind of link, ``timeless`` the same without links in time."""
    followed: dict[str, Sequence[tuple[str, float]]] = {}
    for source, edges in graph.items():
        if source in turns:
            weights = dict(timeless.get(source, ()))
            followed[source] = [
                (t, w) if t in turns else (t, weights[t]) for t, w in edges if t in turns or t in weights
            ]
        elif source in timeless:
            followed[source] = timeless[source]
    return followed


@dataclass(frozen=True, slots=True)
class ConversationStage:
    """The conversation signals of one recall: the words of the query that could name a speaker,
    the question turns among the candidates with the turns that answer them, and the ``share`` of
    a question's relevance its answer receives."""

    names: frozenset[str] = frozenset()
    answers: Mapping[str, str] = field(default_factory=dict)
    share: float = 0.0
    on: bool = True

    @classmethod
    def read(cls, query: str, candidates: Iterable[str], links: LinkReads, share: float) -> ConversationStage:
        """The stage for ``query`` over ``candidates`` (the fused candidates of the recall):
        their answers are read only when a question passes them some relevance (``share`` > 0)."""
        answers = links.answers(list(candidates)) if share > 0 else {}
        return cls(query_names(query), answers, share)

    @classmethod
    def off(cls) -> ConversationStage:
        """No conversation signals: turns rank, and pass the floor, as any memory."""
        return cls(on=False)

    def answered(self, activation: Mapping[str, float], relevance: Mapping[str, float]) -> dict[str, float]:
        """``activation`` with each answer given its share of its question's ``relevance``."""
        return pass_to_answers(activation, relevance, self.answers, self.share)

    def speaker_named(self, row: RankingRow) -> bool:
        """True when the query names who said this candidate (only a turn has a speaker)."""
        return names_speaker(row.speaker, self.names)

    def floor_graph(
        self, graph: Graph, timeless: Graph, rows: Iterable[RankingRow]
    ) -> dict[str, Sequence[tuple[str, float]]]:
        """The links the floor follows among ``rows`` (see ``floor_graph``)."""
        turns = {row.id for row in rows if row.speaker} if self.on else set()
        return floor_graph(graph, timeless, turns)
