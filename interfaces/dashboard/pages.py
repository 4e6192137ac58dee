"""The reading pages: search, browse, one memory, its graph, status and the trash.

Reading a memory here does not count as a use of it (recall does, as everywhere): opening pages
in the dashboard should not change what recall ranks first.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from cognitive_memory.core.links import RELATIONS
from cognitive_memory.core.memory import SourceKind
from cognitive_memory.errors import NotFoundError
from cognitive_memory.service import (
    DEFAULT_PAGE_SIZE,
    BridgeOut,
    MemoryOut,
    MemoryRecordOut,
    OrderBy,
    RecallFilters,
    RelatedResult,
    ranked_reason,
)
from interfaces.dashboard.forms import FilterForm, FormError, compare_edit, edit_values
from interfaces.dashboard.graph import neighbourhood
from interfaces.dashboard.state import blocking, session_of, state_of

__all__ = [
    "browse",
    "changed_page",
    "graph_data",
    "graph_page",
    "memory_page",
    "search",
    "status_page",
    "trash_page",
]

MAX_QUERY_CHARS = 2000
ORDERS: dict[OrderBy, str] = {
    "created": "Newest",
    "last_accessed": "Recently used",
    "importance": "Most important",
    "access_count": "Most used",
}
SCORE_PARTS = (
    "semantic",
    "lexical",
    "relevance",
    "activation",
    "importance",
    "recency",
    "strength",
    "speaker",
)


def _number(text: str | None, default: int, low: int, high: int) -> int:
    if not text:
        return default
    if not text.strip().isdigit() or not low <= int(text) <= high:
        raise FormError(f"{text!r} is not a whole number from {low} to {high}.")
    return int(text)


def _scored(memory: MemoryOut | Any) -> dict[str, Any]:
    """A recalled memory with its score parts (for the bars) and why it was found."""
    if isinstance(memory, BridgeOut):
        parts = [
            ("bridge", memory.bridge_score),
            ("novelty", memory.novelty_score),
            ("connection", memory.connection_potential),
        ]
        return {"memory": memory, "total": memory.bridge_score, "parts": parts, "reason": memory.explanation}
    score = memory.score
    parts = [(name, getattr(score, name)) for name in SCORE_PARTS] if score else []
    reason = ranked_reason(score) if score else ""
    return {"memory": memory, "total": score.total if score else 0.0, "parts": parts, "reason": reason}


async def search(request: Request) -> Response:
    """Recall over a query, with filters: core, peripheral and bridge sections."""
    state, params = state_of(request), request.query_params
    form = FilterForm.of(params)
    query = params.get("q", "").strip()
    sections: list[tuple[str, list[dict[str, Any]]]] = []
    error, message, warning = None, None, None
    try:
        most = _number(params.get("max"), 10, 1, 50)
        if len(query) > MAX_QUERY_CHARS:
            raise FormError(f"The query is {len(query)} characters long; at most {MAX_QUERY_CHARS}.")
        if query:
            result = await blocking(
                state.service.retrieve_memories, query, None, most, True, form.filters(), detail="full"
            )
            lists = result.memories
            sections = [
                (name, [_scored(m) for m in items])
                for name, items in (
                    ("core", lists.core),
                    ("peripheral", lists.peripheral),
                    ("bridge", lists.bridge),
                )
            ]
            message, warning = result.message, result.warning
    except FormError as exc:
        error = exc.message
    context = {
        "query": query,
        "form": form,
        "sections": sections,
        "error": error,
        "message": message,
        "warning": warning,
    }
    return state.renderer.page(request, "search.html", context, 400 if error else 200)


async def browse(request: Request) -> Response:
    """A page of memories, filtered and sorted, with a link to the next page; the first page also
    shows the tags in use and the sessions of every matching memory (each a link that filters)."""
    state, params = state_of(request), request.query_params
    form = FilterForm.of(params)
    order = params.get("order") or "created"
    error, result = None, None
    try:
        limit = _number(params.get("limit"), DEFAULT_PAGE_SIZE, 1, 200)
        cursor = params.get("cursor") or None
        result = await blocking(
            state.service.list_memories, form.filters(), order, limit, cursor, overview=cursor is None
        )
    except FormError as exc:
        error = exc.message
    next_query = (
        form.query(order=order, limit=str(limit), cursor=result.next_cursor)
        if result and result.next_cursor
        else None
    )
    context = {"form": form, "order": order, "orders": ORDERS, "result": result, "error": error}
    context |= {"next_query": next_query, "first_query": form.query(order=order)}
    context["narrow"] = lambda name, value: form.query(order=order, **{name: value})
    return state.renderer.page(request, "browse.html", context, 400 if error else 200)


def _stored(request: Request, memory_id: str) -> tuple[MemoryRecordOut, str]:
    """The memory whole, with its versions, and the revision of that same read (what an edit form
    carries), without counting it as a use."""
    found = state_of(request).service.read_memory(memory_id)
    if found is None:
        raise NotFoundError(f"No memory has the id {memory_id!r}.")
    return found.record, found.revision


def _record(request: Request, memory_id: str) -> MemoryRecordOut:
    return _stored(request, memory_id)[0]


def in_trash(request: Request, memory_id: str) -> bool:
    return bool(state_of(request).service.in_trash([memory_id]))


async def memory_page(
    request: Request, *, error: str | None = None, form: dict[str, str] | None = None
) -> Response:
    """One memory: text, metadata, tags, versions, links, and the forms that change it."""
    state = state_of(request)
    memory_id = request.path_params["memory_id"]
    try:
        memory, revision = await blocking(_stored, request, memory_id)
    except NotFoundError:
        trashed = await blocking(in_trash, request, memory_id)
        context = {"memory_id": memory_id, "trashed": trashed}
        return state.renderer.page(request, "missing.html", context, 404)
    links = await blocking(state.service.related_memories, memory_id, 1)
    context = {
        "memory": memory,
        "links": links.related,
        "relations": RELATIONS,
        "error": error,
        "form": form or {},
        "edit": edit_values(memory, revision, form or {}),
        "request_notice": _notice(request),
    }
    return state.renderer.page(request, "memory.html", context, 400 if error else 200)


async def changed_page(request: Request, posted: dict[str, str]) -> Response:
    """An edit read before the memory last changed (HTTP 409): what it holds now beside what was
    posted, a form to save the posted values over it anyway, a link to start again from it."""
    memory_id = request.path_params["memory_id"]
    try:
        memory, revision = await blocking(_stored, request, memory_id)
    except NotFoundError:
        return await memory_page(request)
    now = edit_values(memory, revision, {})
    context = {
        "memory": memory,
        "fields": compare_edit(now, posted),
        "edit": {**edit_values(memory, revision, posted), "revision": revision},
    }
    return state_of(request).renderer.page(request, "changed.html", context, 409)


async def forget_confirm(request: Request) -> Response:
    """The confirmation step before a memory goes to the trash."""
    state = state_of(request)
    memory_id = request.path_params["memory_id"]
    try:
        memory = await blocking(_record, request, memory_id)
    except NotFoundError:
        context = {"memory_id": memory_id, "trashed": await blocking(in_trash, request, memory_id)}
        return state.renderer.page(request, "missing.html", context, 404)
    return state.renderer.page(request, "forget.html", {"memory": memory})


async def _related(request: Request) -> tuple[str, str, int, RelatedResult]:
    state = state_of(request)
    memory_id = request.path_params["memory_id"]
    depth = _number(request.query_params.get("depth"), 1, 1, 3)
    memory = await blocking(_record, request, memory_id)
    related = await blocking(state.service.related_memories, memory_id, depth)
    return memory_id, memory.content, depth, related


async def graph_page(request: Request) -> Response:
    """The neighbourhood of a memory: drawn by dashboard.js, listed for reading without it."""
    state = state_of(request)
    try:
        memory_id, content, depth, related = await _related(request)
    except FormError as exc:
        context = {"title": "Bad depth", "message": exc.message}
        return state.renderer.page(request, "error.html", context, 400)
    data = neighbourhood(memory_id, content, related)
    labels = {node["id"]: node["label"] for node in data["nodes"]}
    shown = {"memory_id": memory_id, "content": content, "depth": depth, "graph": data, "labels": labels}
    return state.renderer.page(request, "graph.html", shown)


async def graph_data(request: Request) -> Response:
    """The graph as JSON (``nodes``, ``edges``) for dashboard.js."""
    try:
        memory_id, content, _, related = await _related(request)
    except FormError as exc:
        return JSONResponse({"error": exc.message}, status_code=400)
    return JSONResponse(neighbourhood(memory_id, content, related), headers={"cache-control": "no-store"})


def _status(request: Request) -> dict[str, Any]:
    state = state_of(request)
    service = state.service
    status = service.show_status(False)
    by_source = {
        source: service.list_memories(RecallFilters(projects=["*"], sources=[source]), limit=1).total
        for source in (SourceKind.MARKDOWN, SourceKind.GIT, SourceKind.SESSION_LESSON)
    }
    return {
        "status": status,
        "by_source": by_source,
        "sources": service.loaded_sources(),
        "checks": list(state.checks()) if state.checks is not None else [],
        "encoder": service.encoder_state(),
    }


async def status_page(request: Request) -> Response:
    """Counts, index state, queued writes, encoder, doctor's checks and the loaded sources."""
    context = await blocking(_status, request)
    return state_of(request).renderer.page(request, "status.html", context)


async def trash_page(request: Request) -> Response:
    """What the trash holds, each with a restore button."""
    state = state_of(request)
    result = await blocking(state.service.trash_list, 200)
    return state.renderer.page(request, "trash.html", {"result": result})


def _notice(request: Request) -> str | None:
    """The message the session's last change left for this page, once."""
    session = session_of(request)
    return None if session is None else state_of(request).notices.take(session.id)
