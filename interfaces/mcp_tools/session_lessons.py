"""session_lessons: what this session learned, kept for a future one that remembers nothing."""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from cognitive_memory.core.validation import MAX_TEXT_CHARS
from cognitive_memory.service import ImportanceLevel, LessonResult, LessonType, ProjectName, format_lesson
from interfaces.mcp_tools.state import ServerState, answer, call_project, call_session, off_loop, service_of

__all__ = ["REFLECTION_PROMPT", "register"]

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


def register(server: MCPServer[ServerState]) -> None:
    @server.tool(
        name="session_lessons",
        title="Record a session lesson",
        description=REFLECTION_PROMPT,
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False),
    )
    async def session_lessons(
        lesson_content: Annotated[
            str, Field(min_length=1, max_length=MAX_TEXT_CHARS, description="The key insight or learning.")
        ],
        ctx: Context[ServerState, Any],
        lesson_type: Annotated[
            LessonType, Field(description="discovery, pattern, solution, warning or context.")
        ] = "discovery",
        session_context: Annotated[
            str | None, Field(max_length=2000, description="What was being worked on.")
        ] = None,
        importance: Annotated[
            ImportanceLevel, Field(description="low, medium, high or critical.")
        ] = "medium",
        project: Annotated[
            ProjectName | None, Field(description="The project it belongs to ('global': every project).")
        ] = None,
    ) -> Annotated[CallToolResult, LessonResult]:
        scope = await call_project(ctx, project)
        service, session = service_of(ctx), call_session(ctx)
        result = await off_loop(
            lambda: service.store_session_lesson(
                lesson_content, lesson_type, session_context, importance, project=scope, session=session
            )
        )
        return answer(result, format_lesson(result))
