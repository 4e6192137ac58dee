"""The POSTs that change memories; each checks its form's CSRF token first (logging in and out:
``login``).

A refused change answers with the page it came from, the error and the values as typed (nothing
typed is lost); a done change redirects (303) to the page that shows it.
"""

from __future__ import annotations

from urllib.parse import quote

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from cognitive_memory.errors import CognitiveMemoryError, EditConflictError
from cognitive_memory.service import LinkRequest, UnlinkRequest
from interfaces.dashboard.forms import FormError, describe, memory_changes
from interfaces.dashboard.gate import checked_form
from interfaces.dashboard.pages import changed_page, memory_page
from interfaces.dashboard.state import blocking, session_of, state_of

__all__ = ["edit", "forget", "link", "restore", "unlink"]


def _see(request: Request, path: str, notice: str | None = None) -> RedirectResponse:
    """Go to ``path`` after a change; its page shows ``notice`` once (``Notices``)."""
    session = session_of(request)
    if notice and session is not None:
        state_of(request).notices.put(session.id, notice)
    return RedirectResponse(path, status_code=303)


def _memory_path(memory_id: str) -> str:
    return f"/memories/{quote(memory_id, safe='')}"


async def edit(request: Request) -> Response:
    """update_memory with the edit form's values, if the memory is still as the form read it."""
    state = state_of(request)
    memory_id = request.path_params["memory_id"]
    form = await checked_form(request)
    form.setdefault("revision", "")  # a form from before revisions is as stale as an old one
    try:
        changes = memory_changes(form)
        result = await blocking(
            state.service.update_memory, memory_id, changes, expected_revision=form["revision"]
        )
    except EditConflictError:
        return await changed_page(request, form)
    except FormError as exc:
        return await memory_page(request, error=exc.message, form=form)
    except CognitiveMemoryError as exc:
        return await memory_page(request, error=exc.message, form=form)
    return _see(request, _memory_path(memory_id), result.message)


async def link(request: Request) -> Response:
    """link_memories from this memory to another."""
    state = state_of(request)
    memory_id = request.path_params["memory_id"]
    form = await checked_form(request)
    try:
        wanted = LinkRequest.model_validate(
            {
                "from_id": memory_id,
                "to_id": form.get("to_id", "").strip(),
                "relation": form.get("relation", ""),
                "note": form.get("note", "").strip() or None,
            }
        )
        result = await blocking(
            state.service.link_memories, wanted.from_id, wanted.to_id, wanted.relation, wanted.note
        )
    except ValidationError as exc:
        return await memory_page(request, error=f"Not linked: {describe(exc)}", form=form)
    except CognitiveMemoryError as exc:
        return await memory_page(request, error=exc.message, form=form)
    return _see(request, _memory_path(memory_id), result.message)


async def unlink(request: Request) -> Response:
    """unlink_memories: one relation between this memory and another."""
    state = state_of(request)
    memory_id = request.path_params["memory_id"]
    form = await checked_form(request)
    try:
        wanted = UnlinkRequest.model_validate(
            {
                "from_id": form.get("from_id", ""),
                "to_id": form.get("to_id", ""),
                "relation": form.get("relation"),
            }
        )
        result = await blocking(state.service.unlink_memories, wanted.from_id, wanted.to_id, wanted.relation)
    except ValidationError as exc:
        return await memory_page(request, error=f"Not unlinked: {describe(exc)}", form=form)
    except CognitiveMemoryError as exc:
        return await memory_page(request, error=exc.message, form=form)
    return _see(request, _memory_path(memory_id), result.message)


async def forget(request: Request) -> Response:
    """forget_memories, once the confirmation page was answered with ``confirm=yes``."""
    state = state_of(request)
    memory_id = request.path_params["memory_id"]
    form = await checked_form(request)
    if form.get("confirm") != "yes":
        return _see(request, _memory_path(memory_id) + "/forget")
    result = await blocking(state.service.forget_memories, [memory_id])
    if result.kept:
        return await memory_page(request, error=result.kept[0].reason)
    return _see(request, _memory_path(memory_id), result.message)


async def restore(request: Request) -> Response:
    """trash_restore for one trash entry (the trash page) or a memory's newest one; back to it."""
    state = state_of(request)
    form = await checked_form(request)
    memory_id, entry = form.get("memory_id", ""), form.get("entry", "")
    entries = [int(entry)] if entry.isascii() and entry.isdigit() and len(entry) < 19 else []
    result = await blocking(state.service.trash_restore, [] if entries else [memory_id], entries)
    return _see(request, _memory_path(result.restored[0]) if result.restored else "/trash", result.message)
