"""MCP resources: one memory by id (``memory://{memory_id}``), and the current project's most
recent memories (``memory://recent``) and session lessons (``memory://lessons``), as readable text
with each memory's metadata.

The two lists depend on the client's project (its roots), so they are templates with an optional
``{?limit}``: the SDK hands a request's context to templates only. ``LISTED`` names their plain URIs
for resources/list. No `from __future__ import annotations`: the SDK reads the annotations."""

import json
from typing import Any

from mcp import MCPError
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.types import INVALID_PARAMS
from mcp.types import Resource as MCPResource

from cognitive_memory.service import LEVEL_NAMES, MAX_PAGE_SIZE, ListResult, MemoryOut, RecallFilters
from interfaces.mcp_reads import LESSONS, current_project, facade_call
from interfaces.mcp_tools.state import ServerState, service_of

__all__ = ["LESSONS_LIMIT", "LISTED", "RECENT_LIMIT", "memory_text", "register"]

MIME_TYPE = "text/markdown"
RECENT_LIMIT = 20
LESSONS_LIMIT = 50
MAX_ID_CHARS = 100
# Characters of each memory's text in the lists (memory://ID has all of it).
PREVIEW_CHARS = {"recent": 500, "lessons": 2000}

RECENT_DESCRIPTION = (
    f"The current project's {RECENT_LIMIT} most recent memories (and the global ones), newest first, "
    "each with its metadata and the start of its text; ?limit=N for another number (at most "
    f"{MAX_PAGE_SIZE})."
)
LESSONS_DESCRIPTION = (
    f"The current project's session lessons (and the global ones), newest first, at most "
    f"{LESSONS_LIMIT}; ?limit=N for another number (at most {MAX_PAGE_SIZE})."
)
LISTED = [
    MCPResource(
        uri="memory://recent",
        name="recent",
        title="Recent memories",
        description=RECENT_DESCRIPTION,
        mime_type=MIME_TYPE,
    ),
    MCPResource(
        uri="memory://lessons",
        name="lessons",
        title="Session lessons",
        description=LESSONS_DESCRIPTION,
        mime_type=MIME_TYPE,
    ),
]


def register(server: MCPServer[ServerState]) -> None:
    """Add the resources to ``server``: the lists first, so ``memory://{memory_id}`` never takes
    their URIs for ids."""

    @server.resource(
        "memory://recent{?limit}",
        name="recent",
        title="Recent memories",
        description=RECENT_DESCRIPTION,
        mime_type=MIME_TYPE,
    )
    async def recent(ctx: Context[ServerState, Any], limit: str = "") -> str:
        return await _project_list(ctx, _count(limit, RECENT_LIMIT), None, "Recent memories", "recent")

    @server.resource(
        "memory://lessons{?limit}",
        name="lessons",
        title="Session lessons",
        description=LESSONS_DESCRIPTION,
        mime_type=MIME_TYPE,
    )
    async def lessons(ctx: Context[ServerState, Any], limit: str = "") -> str:
        return await _project_list(ctx, _count(limit, LESSONS_LIMIT), LESSONS, "Session lessons", "lessons")

    @server.resource(
        "memory://{memory_id}",
        name="memory",
        title="A memory",
        description="One memory by id (the ids recall_memories, list_memories and store_memory "
        "return): all of its text, with its level, type, project, tags, dates, source and strength.",
        mime_type=MIME_TYPE,
    )
    async def memory(memory_id: str, ctx: Context[ServerState, Any]) -> str:
        if len(memory_id) > MAX_ID_CHARS:
            raise ResourceNotFoundError(f"No memory has the id {memory_id[:MAX_ID_CHARS]}...")
        service = service_of(ctx)
        found = await facade_call(lambda: service.get_memories([memory_id]))
        if not found.memories:
            trashed = " It is in the trash: memory_system trash restore ID." if found.in_trash else ""
            raise ResourceNotFoundError(f"No memory has the id {memory_id}.{trashed}")
        return memory_text(found.memories[0])


async def _project_list(
    ctx: Context[ServerState, Any], count: int, filters: RecallFilters | None, heading: str, kind: str
) -> str:
    """The current project's newest ``count`` memories matching ``filters``, as text."""
    project = await current_project(ctx)
    service = service_of(ctx)
    page = await facade_call(lambda: service.list_memories(filters, "created", count, project=project))
    return list_text(f"{heading} of project {project}", page, PREVIEW_CHARS[kind])


def _count(limit: str, default: int) -> int:
    if not limit:
        return default
    if not limit.isdigit() or not 1 <= int(limit) <= MAX_PAGE_SIZE:
        raise MCPError(
            INVALID_PARAMS, f"limit must be a whole number from 1 to {MAX_PAGE_SIZE}, not {limit!r}."
        )
    return int(limit)


def _metadata_lines(memory: MemoryOut) -> list[str]:
    level = f"L{memory.hierarchy_level} ({LEVEL_NAMES.get(memory.hierarchy_level, '?')})"
    lines = [
        f"- Id: {memory.id}",
        f"- Level: {level}, type {memory.memory_type}",
        f"- Project: {memory.project}",
        f"- Tags: {', '.join(memory.tags) or 'none'}",
        f"- Source: {memory.source_info}",
        f"- Created: {memory.created_date}"
        + (f", source date {memory.source_date}" if memory.source_date else "")
        + f", modified {memory.modified_date or 'never'}",
        f"- Last accessed: {memory.last_accessed or 'never'} ({memory.access_count} times)",
        f"- Importance: {memory.importance_score:.2f}, strength {memory.strength:.2f}",
    ]
    if memory.superseded_by:
        lines.append(f"- Superseded by: {', '.join(memory.superseded_by)}")
    return lines


def memory_text(memory: MemoryOut) -> str:
    """One memory whole: its metadata, then all of its text."""
    lines = [f"# Memory {memory.id}", "", *_metadata_lines(memory)]
    if memory.metadata:
        lines.append(f"- Metadata: {json.dumps(memory.metadata, ensure_ascii=False, sort_keys=True)}")
    return "\n".join([*lines, "", memory.content])


def list_text(title: str, page: ListResult, preview: int) -> str:
    """A list of memories: each one's metadata and the start of its text (up to ``preview``)."""
    lines = [f"# {title} (with the global ones)", ""]
    if not page.memories:
        return "\n".join([*lines, "None yet."])
    lines.append(f"{len(page.memories)} of {page.total}, newest first. Each whole: memory://ID.")
    for memory in page.memories:
        text = memory.content if len(memory.content) <= preview else memory.content[: preview - 3] + "..."
        lines += ["", f"## {memory.id}", *_metadata_lines(memory)[1:], "", text]
    return "\n".join(lines)
