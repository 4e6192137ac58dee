"""Recall's ``explain``: why memories the caller names ranked where they did for the query (their
score parts, as a full answer gives a returned memory's, and the stage that kept each one out),
their answer and their text. The rule is ``retrieval/explaining.py``."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from pydantic import BaseModel, Field

from cognitive_memory.errors import InvalidInputError
from cognitive_memory.index.vector_store import VectorFilter
from cognitive_memory.retrieval import ExplainReason, Explanation, ScoreBreakdown
from cognitive_memory.retrieval.floor import RelevanceFloor
from cognitive_memory.service.ids import resolve_memory_ids, resolve_trashed_ids
from cognitive_memory.service.records import ScoreOut
from cognitive_memory.system import CognitiveSystem

__all__ = ["MAX_EXPLAIN", "ExplainedOut", "explain_ids", "explained_lines", "explained_out", "score_out"]

# How many memories one recall explains: each is read and scored apart from the search.
MAX_EXPLAIN = 10
_ID_CHARS = 100
# The caller's names of the filters (``RecallFilters``) by the payload names the core uses.
_FILTER_NAMES = {
    "hierarchy_level": "hierarchy_levels",
    "memory_type": "memory_types",
    "loader_type": "sources",
    "session_id": "session",
}


class ExplainedOut(BaseModel):
    """Why one memory named in ``explain`` ranked where it did (docs/recall.md#explaining-a-recall)."""

    id: str = Field(description="The id as given.")
    reason: ExplainReason
    why: str = Field(description="The reason in a sentence, with its numbers.")
    rank: int | None = Field(
        default=None,
        description="returned: its rank; below_rank: its place among the memories that passed the "
        "floor; not_candidate: the place its score would take.",
    )
    kind: str | None = Field(default=None, description="returned: core, peripheral or bridge.")
    score: ScoreOut | None = Field(default=None, description="Its score parts for this query.")
    last_score: float | None = Field(default=None, description="below_rank: the last returned score.")
    needed: float | None = Field(default=None, description="below_floor: the evidence it needed.")
    filters: list[str] | None = Field(default=None, description="filtered: the filters it fails.")
    project: str | None = Field(default=None, description="other_project: its project.")


def score_out(score: ScoreBreakdown) -> ScoreOut:
    """A score breakdown as answers give it."""
    return ScoreOut(**score._asdict())


def explain_ids(system: CognitiveSystem, given: Sequence[str]) -> list[str]:
    """The ids ``given`` to ``explain``, checked (at most MAX_EXPLAIN, each an id's length) and
    short ones resolved against the stored memories, then the trash."""
    if len(given) > MAX_EXPLAIN:
        raise InvalidInputError(
            f"`explain` names {len(given)} memories; at most {MAX_EXPLAIN} per recall.", code="out_of_range"
        )
    for memory_id in given:
        if not isinstance(memory_id, str) or not 0 < len(memory_id) <= _ID_CHARS:
            raise InvalidInputError(
                f"`explain` takes memory ids (1 to {_ID_CHARS} characters), not {memory_id!r}.",
                code="invalid_value",
            )
    stored = resolve_memory_ids(system, given)
    trashed = resolve_trashed_ids(system, given)
    return [s if s != g else t for g, s, t in zip(given, stored, trashed, strict=True)]


def explained_out(
    system: CognitiveSystem,
    given: Sequence[str],
    explained: Sequence[Explanation],
    wanted: Collection[str],
    where: VectorFilter,
) -> list[ExplainedOut]:
    """The answer's ``explained``, one per id ``given`` (``explained`` in the same order); a memory
    returned in a list the caller's ``types`` leave out is ``filtered`` by ``types``."""
    floor = system.retriever.config.floor
    trashed = {row.id for row in system.browsing.in_trash([e.memory_id for e in explained])}
    out = []
    for memory_id, e in zip(given, explained, strict=True):
        if e.reason == "returned" and e.kind not in wanted:
            e = Explanation(e.memory_id, "filtered", e.score, filters=("types",), project=e.project)
        out.append(
            ExplainedOut(
                id=memory_id,
                reason=e.reason,
                why=_why(e, floor, where, e.memory_id in trashed),
                rank=e.rank,
                kind=e.kind,
                score=score_out(e.score) if e.score is not None else None,
                last_score=e.last_score if e.reason == "below_rank" else None,
                needed=e.needed,
                filters=[_FILTER_NAMES.get(name, name) for name in e.filters] or None,
                project=e.project if e.reason == "other_project" else None,
            )
        )
    return out


def _why(e: Explanation, floor: RelevanceFloor, where: VectorFilter, trashed: bool) -> str:
    """The reason of ``e`` in a sentence, with its numbers."""
    s = e.score
    if e.reason == "not_found" or s is None:
        if trashed:
            return "It is in the trash (forgotten): restore_memories brings it back."
        return "No memory has this id."
    if e.reason == "returned":
        if e.kind == "bridge":
            return "Returned as a bridge."
        named = f": the query is its key (+{s.key:.2f})" if s.key else ""
        return f"Returned at rank {e.rank} ({e.kind}){named}."
    if e.reason == "other_project":
        scope = ", ".join(where.projects)
        return (
            f"It belongs to project '{e.project}', outside this recall's ({scope}): "
            f"filters.projects ['{e.project}'] or ['*'] reaches it."
        )
    if e.reason == "filtered":
        names = ", ".join(_FILTER_NAMES.get(name, name) for name in e.filters)
        return f"Left out by the filters: {names}."
    if e.reason == "below_floor":
        return _below_floor(s, floor, e.needed)
    if e.reason == "not_candidate":
        return (
            f"Neither its meaning (cosine {s.similarity:.2f}) nor its words ({s.words:.0%} of the "
            f"query's) nor its links put it among the candidates; its score {s.total:.3f} would "
            f"rank it {e.rank}."
        )
    return (
        f"Passed the relevance floor but ranked {e.rank} of {e.passed}: its score {s.total:.3f}, "
        f"the last returned {e.last_score or 0.0:.3f}; a larger max_results reaches it."
    )


def _below_floor(s: ScoreBreakdown, floor: RelevanceFloor, needed: float | None) -> str:
    own = (
        f"evidence {s.evidence:.2f} (cosine {s.similarity:.2f} + {floor.word_weight:g} x words {s.words:.2f})"
    )
    if needed == floor.anchor and needed != floor.floor:
        return (
            f"Below the relevance floor: no memory reached the evidence {floor.anchor:.2f} an answer "
            f"needs, so none was returned; its {own}."
        )
    return (
        f"Below the relevance floor: its {own} is under {floor.floor:.2f}, and its links passed it "
        f"{s.linked:.2f} (under {floor.activation:.2f})."
    )


def explained_lines(explained: Sequence[ExplainedOut]) -> list[str]:
    """The text of ``explained``: one line per memory, its reason and why."""
    lines = ["", f"EXPLAINED ({len(explained)}):"]
    for item in explained:
        total = f", score {item.score.total:.3f}" if item.score is not None else ""
        lines += [f"- {item.id}: {item.reason}{total}", f"   {item.why}"]
    return lines
