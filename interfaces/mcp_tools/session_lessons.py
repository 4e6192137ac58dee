"""session_lessons: what this session learned, kept for a future one that remembers nothing."""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from cognitive_memory.core.validation import MAX_TEXT_CHARS
from cognitive_memory.service import ImportanceLevel, LessonResult, LessonType, ProjectName, format_lesson
from interfaces.mcp_tools.state import ServerState, answer, call_project, call_session, off_loop, service_of

__all__ = ["register"]

DESCRIPTION = (
    "Record a lesson for a future session that will remember nothing of this one: an insight, a "
    "pattern or solution that worked (or failed, and why), needed context, a warning, written to a "
    "future self picking up where you left off. Lessons rank higher in recall."
)


def register(server: MCPServer[ServerState]) -> None:
    @server.tool(
        name="session_lessons",
        title="Record a session lesson",
        description=DESCRIPTION,
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False),
    )
    async def session_lessons(
        lesson_content: Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)],
        ctx: Context[ServerState, Any],
        lesson_type: LessonType = "discovery",
        session_context: Annotated[
            str | None, Field(max_length=2000, description="What the session worked on.")
        ] = None,
        importance: ImportanceLevel = "medium",
        project: Annotated[
            ProjectName | None, Field(description="'global': seen from every project.")
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
