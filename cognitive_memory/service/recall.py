"""Recall: the memories relevant to a query (recall_memories, `memory_system recall`, the hooks'
prompt context, the dashboard's search), whole or brief, and their text."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from cognitive_memory.core.memory import BridgeMemory, CognitiveMemory
from cognitive_memory.retrieval import RankedMemory, RetrievalResult, ScoreBreakdown
from cognitive_memory.retrieval.floor import RelevanceFloor
from cognitive_memory.service.explained import (
    ExplainedOut,
    explain_ids,
    explained_lines,
    explained_out,
    score_out,
)
from cognitive_memory.service.filters import RecallFilters, scope_filter
from cognitive_memory.service.ids import short_ids
from cognitive_memory.service.records import (
    MANUAL_SOURCE,
    MemoryOut,
    ScoreOut,
    format_source_info,
    memories,
    memory_fields,
)
from cognitive_memory.system import CognitiveSystem

__all__ = [
    "BRIEF_CONTENT_CHARS",
    "RECALL_TYPES",
    "BridgeOut",
    "BriefMemoryOut",
    "Detail",
    "RecallLists",
    "RecallResult",
    "RecallType",
    "brief_content",
    "format_recall",
    "ranked_reason",
    "recall",
]

RecallType = Literal["core", "peripheral", "bridge"]
RECALL_TYPES = ("core", "peripheral", "bridge")
# How much of each memory a recall answer holds (BriefMemoryOut or the whole MemoryOut record).
Detail = Literal["brief", "full"]

# Characters of a memory a brief recall answer holds: a loaded markdown section is at most about
# this long (the loader's MAX_CHUNK_CHARS), so only long hand-stored texts are cut.
BRIEF_CONTENT_CHARS = 1500
# The cosine from which a brief answer says "meaning" found a memory (a typical on-topic match
# of MiniLM is 0.4 and above; off-topic text stays below 0.3).
MEANING_SIMILARITY = 0.3
# The activation from other results from which a brief answer says "linked": the relevance
# floor's own threshold for letting a memory in through its links.
LINKED_ACTIVATION = RelevanceFloor().activation


class BridgeOut(MemoryOut):
    bridge_score: float
    novelty_score: float
    connection_potential: float
    explanation: str
    connected_to: str | None = None


class BriefMemoryOut(BaseModel):
    """A recalled memory as ``detail: brief`` gives it: what a model uses, nothing more. Its ids
    are short (``ids.py``); a field that would say nothing is absent."""

    id: str
    content: str = Field(description="The whole text, or its first 1500 characters when truncated.")
    truncated: bool | None = Field(
        default=None, description="Present (true) when content was cut: get_memories returns it whole."
    )
    score: float = Field(description="The ranking score (a bridge: its bridge score).")
    date: str = Field(description="When it happened (source date) or was stored, YYYY-MM-DD.")
    source: str | None = Field(default=None, description="Where it came from; absent when stored by hand.")
    tags: list[str] | None = Field(default=None, description="Absent when it has none.")
    project: str | None = Field(default=None, description="Absent when it is the project recalled from.")
    superseded_by: list[str] | None = Field(
        default=None, description="Ids of memories that supersede it (absent when none)."
    )
    connected_to: str | None = Field(default=None, description="A bridge's: the core memory it is close to.")
    # What found it (meaning, words, linked, speaker): shown in the text for people, left out of
    # the structured copy, where the score stands for it.
    reason: str = Field(default="", exclude=True)


class RecallLists(BaseModel):
    core: list[BriefMemoryOut | MemoryOut] = Field(default_factory=list)
    peripheral: list[BriefMemoryOut | MemoryOut] = Field(default_factory=list)
    bridge: list[BriefMemoryOut | BridgeOut] = Field(default_factory=list)


class RecallResult(BaseModel):
    success: bool = True
    query: str
    detail: Detail = "full"
    total_results: int
    memories: RecallLists
    degraded: bool = Field(
        default=False,
        exclude_if=lambda degraded: not degraded,
        description="Present (true) when the vector index was unavailable, or lacks memories (being "
        "rebuilt): what it could not give was found by words only. `warning` says which.",
    )
    warning: str | None = Field(
        default=None, description="Present with degraded: why, and what happens next."
    )
    message: str | None = Field(
        default=None, description="Why nothing was returned, or that some contents were truncated."
    )
    explained: list[ExplainedOut] | None = Field(
        default=None, description="Present with explain: why each memory named ranked where it did."
    )


def recall(
    system: CognitiveSystem,
    query: str,
    types: Collection[str] | None,
    max_results: int,
    include_bridges: bool,
    filters: RecallFilters | None,
    *,
    project: str,
    detail: Detail,
    session: str | None = None,
    explain: Sequence[str] = (),
) -> RecallResult:
    """Core and peripheral memories (rank order) and bridges of ``project`` and the global
    memories, at most ``max_results`` of them all (bridges take what the ranked ones leave);
    ``session`` is the caller's (``filters.session`` 'current'); ``explain``: ids of memories to
    say why they ranked where they did (``explained.py``)."""
    wanted = set(types or RECALL_TYPES)
    bridges_wanted = include_bridges and "bridge" in wanted
    where = scope_filter(filters, project, session)
    named = explain_ids(system, explain)
    result = system.retrieve(
        query,
        max_results=max_results,
        include_bridges=bridges_wanted,
        where=where,
        max_total=max_results,
        explain=named,
    )
    core = result.core if "core" in wanted else []
    peripheral = result.peripheral if "peripheral" in wanted else []
    if detail == "brief":
        lists = _brief_lists(system, core, peripheral, result.bridges, project)
    else:
        now = system.now()
        lists = RecallLists(
            core=[_ranked_out(r) for r in core],
            peripheral=[_ranked_out(r) for r in peripheral],
            bridge=[_bridge_out(b, now) for b in result.bridges],
        )
    every = [*lists.core, *lists.peripheral, *lists.bridge]
    return RecallResult(
        query=result.query,
        detail=detail,
        total_results=len(every),
        memories=lists,
        degraded=result.degraded or result.shortfall is not None,
        warning=_index_warning(result),
        message=_recall_message(result.query, every),
        explained=explained_out(system, explain, result.explained, wanted, where) if explain else None,
    )


def _index_warning(result: RetrievalResult) -> str | None:
    if result.degraded:
        return "The vector index is unavailable: these were found by their words only."
    if result.shortfall is not None:
        held, expected = result.shortfall
        return (
            f"The vector index holds {held:,} of {expected:,} memories (a server on the embedded "
            "index starts rebuilding it within a minute; `memory_system doctor --repair` does so "
            "now): those it lacks were found by their words only."
        )
    return None


def _ranked_out(ranked: RankedMemory) -> MemoryOut:
    s = ranked.score
    score = score_out(s)
    return MemoryOut(
        # The strength ranking used, computed at the time of the recall.
        **{**memory_fields(ranked.memory), "strength": s.strength},
        rank=ranked.rank,
        similarity_score=s.similarity,
        score=score,
        superseded_by=list(ranked.superseded_by),
    )


def _bridge_out(bridge: BridgeMemory, now: datetime | None = None) -> BridgeOut:
    return BridgeOut(
        **memory_fields(bridge.memory, now),
        bridge_score=bridge.bridge_score,
        novelty_score=bridge.novelty_score,
        connection_potential=bridge.connection_potential,
        explanation=bridge.explanation,
        connected_to=bridge.connected_to,
    )


def _brief_lists(
    system: CognitiveSystem,
    core: Sequence[RankedMemory],
    peripheral: Sequence[RankedMemory],
    bridges: Sequence[BridgeMemory],
    project: str,
) -> RecallLists:
    """The lists as ``detail: brief`` gives them, every id in its short form."""
    named = [i for r in (*core, *peripheral) for i in (r.memory.id, *r.superseded_by)]
    named += [i for b in bridges for i in (b.memory.id, b.connected_to) if i]
    short = short_ids(system, named)

    def ranked(found: RankedMemory) -> BriefMemoryOut:
        superseded = [short[i] for i in found.superseded_by] or None
        brief = _brief(found.memory, round(found.score.total, 3), short, project)
        return brief.model_copy(update={"reason": ranked_reason(found.score), "superseded_by": superseded})

    def bridge(found: BridgeMemory) -> BriefMemoryOut:
        near = short.get(found.connected_to) if found.connected_to else None
        brief = _brief(found.memory, round(found.bridge_score, 3), short, project)
        return brief.model_copy(update={"reason": f"bridge: close to {near}", "connected_to": near})

    return RecallLists(
        core=[ranked(r) for r in core],
        peripheral=[ranked(r) for r in peripheral],
        bridge=[bridge(b) for b in bridges],
    )


def _brief(memory: CognitiveMemory, score: float, short: dict[str, str], project: str) -> BriefMemoryOut:
    content, truncated = brief_content(memory.content)
    source = format_source_info(memory)
    return BriefMemoryOut(
        id=short.get(memory.id, memory.id),
        content=content,
        truncated=True if truncated else None,
        score=score,
        date=(memory.source_date or memory.created_date).date().isoformat(),
        source=None if source == MANUAL_SOURCE else source,
        tags=list(memory.tags) or None,
        project=None if memory.project == project else memory.project,
    )


def brief_content(text: str, limit: int = BRIEF_CONTENT_CHARS) -> tuple[str, bool]:
    """``text`` whole when it fits in ``limit`` characters, else cut at the last word boundary
    before it (mid-word only for a word longer than a fifth of the limit); True when cut."""
    if len(text) <= limit:
        return text, False
    cut = text[:limit]
    boundary = max(cut.rfind(" "), cut.rfind("\n"))
    return (cut[:boundary] if boundary > limit * 4 // 5 else cut).rstrip(), True


def _recall_message(query: str, found: Sequence[BriefMemoryOut | MemoryOut]) -> str | None:
    """What a recall answer needs said: that nothing was relevant, or that some texts were cut."""
    if not found:
        return (
            f"No memory is relevant enough to '{query}': nothing in memory matches it. "
            "Store it if it is worth remembering, or rephrase the query."
        )
    cut = [m.id for m in found if isinstance(m, BriefMemoryOut) and m.truncated]
    if cut:
        return (
            f"{len(cut)} memories were cut at {BRIEF_CONTENT_CHARS} characters (truncated: true); "
            "get_memories returns them whole."
        )
    return None


def ranked_reason(score: ScoreBreakdown | ScoreOut) -> str:
    """Which signals found a memory: key (the query is its key), meaning (cosine), words (share
    of the query's words it holds), linked (activation from results that passed the floor),
    speaker (the query names who said it). Also read from a full answer's ``ScoreOut`` (the
    dashboard's search)."""
    reasons = ["key"] if score.key > 0 else []
    if score.similarity >= MEANING_SIMILARITY:
        reasons.append("meaning")
    if score.words > 0:
        reasons.append(f"words ({score.words:.0%})")
    if score.linked >= LINKED_ACTIVATION:
        reasons.append("linked")
    if score.speaker > 0:
        reasons.append("speaker")
    return ", ".join(reasons) or "weak: nearest by rank only"


def format_recall(result: RecallResult) -> str:
    """The same memories as the structured answer, each text as whole as it is there: brief gives
    one header line per memory and its text; full adds every score, dates and access counts. The
    memories named in ``explain`` come last, each with why it ranked where it did."""
    explained = explained_lines(result.explained) if result.explained else []
    return "\n".join([_memories_text(result), *explained])


def _memories_text(result: RecallResult) -> str:
    lists = result.memories
    note = [f"⚠️ {result.warning}"] if result.warning else []
    if result.total_results == 0:
        return "\n".join([f"📋 {result.message}", *note])
    lines = [f"📋 {memories(result.total_results)} for: '{result.query}'", *note]
    if result.message:
        lines.append(result.message)
    groups = (("core", lists.core), ("peripheral", lists.peripheral), ("bridge", lists.bridge))
    if result.detail == "brief":
        ranked = [(kind, m) for kind, found in groups for m in found if isinstance(m, BriefMemoryOut)]
        for number, (kind, memory) in enumerate(ranked, start=1):
            lines += ["", *_brief_lines(number, kind, memory)]
        return "\n".join(lines)
    number = 0
    for kind, found in groups:
        if found:
            lines += ["", f"{kind.upper()} MEMORIES ({len(found)}):"]
        for record in found:
            if isinstance(record, MemoryOut):  # full answers hold whole records only
                number += 1
                lines += ["", *_full_lines(number, record)]
    return "\n".join(lines)


def _brief_lines(number: int, kind: str, memory: BriefMemoryOut) -> list[str]:
    head = [
        f"{number}. [{kind}] {memory.id}",
        f"score {memory.score:.2f}",
        memory.reason,
        *([memory.source] if memory.source else []),
        memory.date,
        *([f"project {memory.project}"] if memory.project else []),
        *([f"tags: {', '.join(memory.tags)}"] if memory.tags else []),
    ]
    lines = [" · ".join(head), *_indented(memory.content)]
    if memory.truncated:
        lines.append(f"   [cut at {len(memory.content)} characters: get_memories returns the rest]")
    if memory.superseded_by:
        lines.append(f"   Superseded by: {', '.join(memory.superseded_by)}")
    return lines


def _indented(text: str) -> list[str]:
    return [f"   {line}" if line else "" for line in text.splitlines()]


def _full_lines(number: int, memory: MemoryOut) -> list[str]:
    """A whole recalled record: its scores, source, dates, access count and its whole text."""
    if isinstance(memory, BridgeOut):
        scores = (
            f"Bridge Score: {memory.bridge_score:.2f}, Novelty: {memory.novelty_score:.2f}, "
            f"Connection: {memory.connection_potential:.2f}"
        )
        kind, why = "bridge", [f"   {memory.explanation}"]
    else:
        s = memory.score
        scores = (
            f"Score: {s.total:.3f} (similarity {s.similarity:.2f}, words {s.words:.2f}, "
            f"evidence {s.evidence:.2f}, linked {s.linked:.2f}, relevance {s.relevance:.2f}, "
            f"activation {s.activation:.2f}{f', key +{s.key:.2f}' if s.key else ''})"
            if s
            else ""
        )
        kind, why = memory.memory_type, []
    return [
        f"{number}. [{kind}] {memory.id}, Level: L{memory.hierarchy_level}, Strength: {memory.strength:.2f}",
        f"   {scores}",
        *why,
        f"   Source: {memory.source_info}",
        f"   Created: {memory.created_date}, Accessed: {memory.access_count} times",
        *([f"   Superseded by: {', '.join(memory.superseded_by)}"] if memory.superseded_by else []),
        *_indented(memory.content),
    ]
