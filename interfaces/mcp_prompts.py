"""MCP prompts: ``reflect`` (record what this session learned) and ``recall-context`` (a topic in,
the memories about it out, as a message ready to send).

No `from __future__ import annotations`: the SDK reads the annotations for the prompt arguments."""

from typing import Annotated, Any

from mcp import MCPError
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.prompts.base import UserMessage
from mcp.types import INVALID_PARAMS
from pydantic import Field

from cognitive_memory.core.validation import MAX_QUERY_CHARS
from cognitive_memory.service import LESSON_PLACEMENT, ListResult, format_recall
from interfaces.mcp_reads import LESSONS, current_project, facade_call
from interfaces.mcp_tools.state import ServerState, service_of

__all__ = ["KNOWN_LESSONS", "RECALL_LIMIT", "REFLECTION_PROMPT", "register"]

# Lessons already recorded that ``reflect`` shows (so the new ones add to them), and memories
# ``recall-context`` puts in its message.
KNOWN_LESSONS = 10
RECALL_LIMIT = 10
LESSON_PREVIEW = 300

REFLECTION_PROMPT = """Record a lesson from this session for a future session after complete amnesia.

Consider what would be valuable for that future session:
- What key insights or discoveries emerged from this work?
- What patterns or systematic approaches proved effective?
- What technical solutions worked (or failed) and why?
- What context about the current project or problem would be essential?
- What warnings or gotchas should be remembered?
- What approaches or tools showed promise for future use?

Frame the lesson as if speaking to a future version of yourself who remembers nothing about this
session but needs to pick up where you left off. Lessons are boosted in later recalls."""

RECORD_STEP = (
    "Then record each lesson (one to three is typical; none if nothing new was learned) with the "
    "session_lessons tool: lesson_content (the insight, self-contained), lesson_type (discovery, "
    "pattern, solution, warning or context), importance (low, medium, high or critical) and "
    "session_context (one line on what was being worked on)."
)


def register(server: MCPServer[ServerState]) -> None:
    """Add the prompts to ``server``."""

    @server.prompt(
        name="reflect",
        title="Reflect on this session",
        description="Look back on this session and record its lessons (session_lessons) for a future "
        "session that remembers nothing; shows the lessons this project already has.",
    )
    async def reflect(
        ctx: Context[ServerState, Any],
        session_context: Annotated[
            str | None, Field(max_length=2000, description="What this session worked on (optional).")
        ] = None,
    ) -> list[UserMessage]:
        project = await current_project(ctx)
        service = service_of(ctx)
        known = await facade_call(
            lambda: service.list_memories(LESSONS, "created", KNOWN_LESSONS, project=project)
        )
        return [UserMessage(reflection_text(session_context, project, known))]

    @server.prompt(
        name="recall-context",
        title="Recall context on a topic",
        description="The memories about a topic (this project's and the global ones) as a message "
        "to start from.",
    )
    async def recall_context(
        ctx: Context[ServerState, Any],
        topic: Annotated[str, Field(description="What the memories should be about.")],
    ) -> list[UserMessage]:
        query = " ".join(topic.split())
        if not query or len(query) > MAX_QUERY_CHARS:
            raise MCPError(INVALID_PARAMS, f"topic must hold 1 to {MAX_QUERY_CHARS} characters of text.")
        project = await current_project(ctx)
        service = service_of(ctx)
        result = await facade_call(
            lambda: service.retrieve_memories(
                query, max_results=RECALL_LIMIT, project=project, detail="brief"
            )
        )
        if result.total_results == 0:
            return [UserMessage(f'Cognitive Memory holds nothing about "{query}" (project {project}) yet.')]
        intro = (
            f'What Cognitive Memory remembers about "{query}" (project {project} and global), best '
            "first. Use it as context; a memory can be out of date, so check what matters before "
            "relying on it (get_memories opens one whole)."
        )
        return [UserMessage(f"{intro}\n\n{format_recall(result)}")]


def reflection_text(session_context: str | None, project: str, known: ListResult) -> str:
    """The reflection request: the questions, this session's context, the lessons already there."""
    about = " ".join((session_context or "").split())
    parts = [
        REFLECTION_PROMPT,
        f"This session: {about}" if about else "Look back over this whole session.",
    ]
    if known.memories:
        lines = [f"Lessons project {project} already has (record only what they miss):"]
        for memory in known.memories:
            kind = next((tag for tag in memory.tags if tag in LESSON_PLACEMENT), "lesson")
            lines.append(f"- [{kind}] {_preview(memory.content)} ({memory.id})")
        parts.append("\n".join(lines))
    parts.append(RECORD_STEP)
    return "\n\n".join(parts)


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= LESSON_PREVIEW else flat[: LESSON_PREVIEW - 3] + "..."
