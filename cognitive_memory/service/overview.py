"""The overview of the memories a list matches (list_memories ``overview``, `memory_system list
--overview`, the dashboard's browse page): the tags in use with their counts, and the sessions
with their counts and first and last times; at most OVERVIEW_SIZE of each, then a count of the rest."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, Field

from cognitive_memory.core.store.values import Overview, TextMatch
from cognitive_memory.index.vector_store import VectorFilter
from cognitive_memory.system import CognitiveSystem

__all__ = ["OVERVIEW_SIZE", "OverviewOut", "SessionOut", "TagOut", "format_overview", "overview"]

# How many tags and how many sessions an overview names: an answer never grows with the store.
OVERVIEW_SIZE = 25


class TagOut(BaseModel):
    tag: str
    memories: int


class SessionOut(BaseModel):
    session: str = Field(description="Pass it as filters.session.")
    memories: int
    first: str = Field(description="Its first memory stored (ISO 8601).")
    last: str


class OverviewOut(BaseModel):
    """The most used tags first and the latest sessions first, then how many others there are."""

    tags: list[TagOut]
    more_tags: int = Field(description="Tags in use not listed.")
    untagged: int = Field(description="Memories without a tag.")
    sessions: list[SessionOut]
    more_sessions: int = Field(description="Sessions not listed.")
    more_session_memories: int = Field(description="Their memories.")
    without_session: int = Field(description="Memories of no session (loaded ones).")


def overview(system: CognitiveSystem, where: VectorFilter, match: TextMatch | None) -> OverviewOut:
    """The tags and sessions of the memories matching ``where`` (and ``match``)."""
    return _overview_out(system.browsing.overview(where, match, OVERVIEW_SIZE))


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat()


def _overview_out(found: Overview) -> OverviewOut:
    return OverviewOut(
        tags=[TagOut(tag=t.tag, memories=t.memories) for t in found.tags],
        more_tags=found.more_tags,
        untagged=found.untagged,
        sessions=[
            SessionOut(session=s.session, memories=s.memories, first=_iso(s.first), last=_iso(s.last))
            for s in found.sessions
        ],
        more_sessions=found.more_sessions,
        more_session_memories=found.more_session_memories,
        without_session=found.without_session,
    )


def _memories(n: int) -> str:
    return f"{n:,} memory" if n == 1 else f"{n:,} memories"


def format_overview(result: OverviewOut) -> list[str]:
    """The overview's lines: tags with their counts, then sessions with their counts and times."""
    tags = ", ".join(f"{t.tag} ({t.memories:,})" for t in result.tags) or "none"
    lines = [f"🏷️ Tags, most used first: {tags}"]
    if result.more_tags:
        lines.append(f"   and {result.more_tags:,} more tags")
    if result.untagged:
        lines.append(f"   {_memories(result.untagged)} without a tag")
    lines.append("🗂️ Sessions, latest first:" if result.sessions else "🗂️ Sessions: none")
    lines += [
        f"   {s.session}: {_memories(s.memories)}, {s.first[:16]} to {s.last[:16]}" for s in result.sessions
    ]
    if result.more_sessions:
        more = f"{result.more_sessions:,} more sessions ({_memories(result.more_session_memories)})"
        lines.append(f"   and {more}")
    if result.without_session:
        lines.append(f"   {_memories(result.without_session)} of no session")
    return lines
