"""Claude Code hooks over the MemoryService facade: what each hook event prints, composed in one
place for both ways a hook is answered (a running server over its hook socket, or the hook
process itself with the memory opened in-process).

- ``session-start``: the project's session lessons, concepts and recent memories, as context.
- ``user-prompt-submit``: recall on the prompt; what passes the relevance floor, as context.
- ``session-end`` / ``pre-compact``: the session's prompts and changed files (from its transcript)
  kept as one episode per session, updated in place when the transcript grew.

The project is the hook's ``cwd`` (its git top-level folder name, else the folder's name) unless
the request names one. Context is bounded by ``max_chars``; nothing to add is an empty answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from cognitive_memory.core.memory import LOADED_KINDS, SourceKind
from cognitive_memory.core.validation import MAX_QUERY_CHARS, check_session
from cognitive_memory.errors import InvalidInputError
from cognitive_memory.service import (
    BriefMemoryOut,
    MemoryChanges,
    MemoryOut,
    MemoryService,
    ProjectName,
    RecallFilters,
    StoreContext,
)
from interfaces.roots import project_of_path
from interfaces.transcripts import episode_text, read_transcript

__all__ = [
    "DEFAULT_MAX_CHARS",
    "HOOK_EVENTS",
    "MAX_CONTEXT_CHARS",
    "HookAnswer",
    "HookRequest",
    "answer_hook",
    "session_tag",
]

# The command's event names and Claude Code's.
HOOK_EVENTS = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "session-end": "SessionEnd",
    "pre-compact": "PreCompact",
}
DEFAULT_MAX_CHARS = 1500
# Claude Code passes about 10,000 characters of a hook's context whole, and previews beyond that.
MAX_CONTEXT_CHARS = 10_000
RECALLED = 5  # memories recalled for a prompt, at most
LISTED = 5  # memories of each kind a session starts with, at most
ITEM_CHARS = 300  # characters of one memory in the context
SESSION_TAGS = ("claude-code", "session")
_LOADED = tuple(kind.value for kind in LOADED_KINDS)  # kept in step with a file or a repository
_PROJECT: TypeAdapter[str] = TypeAdapter(ProjectName)


@dataclass(frozen=True, slots=True)
class HookRequest:
    """One hook to answer: the event, Claude Code's input, the bound on context and the project
    (None: the one of ``cwd``)."""

    event: str
    payload: Mapping[str, Any]
    max_chars: int = DEFAULT_MAX_CHARS
    project: str | None = None

    @classmethod
    def from_wire(cls, message: object) -> HookRequest:
        """The request a hook client sent as JSON; InvalidInputError names what is wrong."""
        if not isinstance(message, dict):
            raise InvalidInputError("a hook request is a JSON object")
        event, payload = message.get("event"), message.get("payload")
        max_chars, project = message.get("max_chars", DEFAULT_MAX_CHARS), message.get("project")
        if event not in HOOK_EVENTS:
            raise InvalidInputError(f"unknown hook event {event!r}; one of {', '.join(HOOK_EVENTS)}")
        if not isinstance(payload, dict):
            raise InvalidInputError("`payload` (the hook's input) must be a JSON object")
        if type(max_chars) is not int or not 0 <= max_chars <= MAX_CONTEXT_CHARS:
            raise InvalidInputError(f"`max_chars` must be a whole number from 0 to {MAX_CONTEXT_CHARS}")
        if project is not None:
            project = _PROJECT.validate_python(project)
        return cls(str(event), payload, max_chars, project)

    def text(self, field: str) -> str | None:
        """A string field of the hook's input (None when absent or not a non-blank string)."""
        value = self.payload.get(field)
        return value if isinstance(value, str) and value.strip() else None

    @property
    def scope(self) -> str | None:
        """The project the hook works in: the request's, else the one ``cwd`` stands for."""
        if self.project:
            return self.project.strip()
        cwd = self.text("cwd")
        try:
            return project_of_path(Path(cwd)) if cwd else None
        except (OSError, ValueError):  # a folder that cannot be looked at (a NUL, no permission)
            return None


@dataclass(frozen=True, slots=True)
class HookAnswer:
    """What the hook prints on stdout ("" for nothing) and a line for stderr (None for none)."""

    stdout: str = ""
    note: str | None = None


def answer_hook(service: MemoryService, request: HookRequest) -> HookAnswer:
    """Answer one hook over ``service`` (core errors propagate; the caller logs them)."""
    if request.event == "session-start":
        return _context(request, _session_start(service, request))
    if request.event == "user-prompt-submit":
        return _context(request, _prompt_context(service, request))
    return _keep_session(service, request)


def _context(request: HookRequest, text: str) -> HookAnswer:
    if not text:
        return HookAnswer()
    output = {"hookEventName": HOOK_EVENTS[request.event], "additionalContext": text}
    return HookAnswer(json.dumps({"hookSpecificOutput": output}, ensure_ascii=False))


def _session_start(service: MemoryService, request: HookRequest) -> str:
    """Session lessons and concepts (most important first), then recent decisions and episodes;
    memories loaded from markdown or git are left out."""
    project = service.scope(request.scope)
    sections = [
        ("Lessons", _listed(service, project, "importance", sources=[SourceKind.SESSION_LESSON])),
        ("Concepts", _listed(service, project, "importance", hierarchy_levels=[0])),
        ("Recent", _listed(service, project, "created", hierarchy_levels=[1, 2])),
    ]
    head = (
        f"Cognitive Memory: what earlier sessions left for project '{project}' "
        "(ids work with get_memories and update_memory)."
    )
    return _bounded(head, sections, request.max_chars)


def _listed(service: MemoryService, project: str, order: str, **filters: Any) -> list[MemoryOut]:
    """The first LISTED memories of the project (and global ones) matching ``filters``, highest
    ``order`` first, leaving out those loaded from a file or a repository (they are in the
    project's files already)."""
    page = service.list_memories(RecallFilters(**filters), order, 4 * LISTED, project=project)
    return [m for m in page.memories if m.metadata.get("loader_type") not in _LOADED][:LISTED]


def _prompt_context(service: MemoryService, request: HookRequest) -> str:
    """The memories recall finds relevant to the prompt (none pass the floor: nothing)."""
    prompt = request.text("prompt")
    if prompt is None:
        return ""
    project = service.scope(request.scope)
    result = service.retrieve_memories(
        prompt.strip()[:MAX_QUERY_CHARS],
        ("core", "peripheral"),
        RECALLED,
        False,
        project=project,
        detail="brief",
    )
    found = [*result.memories.core, *result.memories.peripheral]
    head = f"Cognitive Memory recalled for this prompt (project '{project}'; ids work with get_memories):"
    return _bounded(head, [("", found)], request.max_chars)


def _bounded(
    head: str, sections: Iterable[tuple[str, list[MemoryOut] | list[BriefMemoryOut | MemoryOut]]], limit: int
) -> str:
    """``head`` and one line per memory (each seen once, a section's title before its first), as
    many as fit in ``limit`` characters; "" when not one memory fits."""
    text, seen = head, set[str]()
    for title, memories in sections:
        titled = not title
        for memory in memories:
            if memory.id in seen:
                continue
            line = _line(memory) if titled else f"{title}:\n{_line(memory)}"
            if len(text) + 1 + len(line) > limit:
                return text if seen else ""
            text, titled = f"{text}\n{line}", True
            seen.add(memory.id)
    return text if seen else ""


def _line(memory: BriefMemoryOut | MemoryOut) -> str:
    text = " ".join(memory.content.split())
    if len(text) > ITEM_CHARS:
        text = text[: ITEM_CHARS - 1].rstrip() + "…"
    date = memory.date if isinstance(memory, BriefMemoryOut) else memory.created_date[:10]
    return f"- [{memory.id}] ({date}) {text}"


def session_tag(session_id: str) -> str:
    """The tag that marks the episode of one Claude Code session."""
    return f"session:{session_id.strip()[:90]}"


def _keep_session(service: MemoryService, request: HookRequest) -> HookAnswer:
    """Store the session as one episode, or update the one stored before; nothing new: nothing."""
    session_id, transcript = request.text("session_id"), request.text("transcript_path")
    if session_id is None or transcript is None:
        return HookAnswer(note="no session_id or transcript_path in the hook's input: nothing kept")
    try:
        record = read_transcript(Path(transcript), request.text("cwd"))
    except InvalidInputError as exc:
        return HookAnswer(note=f"{exc.message}; nothing kept")
    if record.empty:
        return HookAnswer(note=f"nothing to keep from {transcript}")
    project = service.scope(request.scope)
    text, tag = episode_text(record, project), session_tag(session_id)
    unread = f" ({record.unread})" if record.unread else ""
    found = service.list_memories(RecallFilters(tags=[tag], projects=["*"]), "created", 1)
    if found.memories:
        kept = found.memories[0]
        if kept.content == text:
            return HookAnswer(
                note=f"session {session_id} already kept as memory {kept.id}: unchanged{unread}"
            )
        service.update_memory(kept.id, MemoryChanges(text=text))
        return HookAnswer(note=f"session {session_id} kept as memory {kept.id} (updated){unread}")
    context = StoreContext(
        hierarchy_level=2,
        memory_type="episodic",
        importance_score=0.4,
        tags=[*SESSION_TAGS, tag],
        project=project,
        source_info="Claude Code session transcript",
        session=_session_name(session_id),
    )
    stored = service.store_experience(text, context)
    return HookAnswer(note=f"session {session_id} kept as memory {stored.memory_id}{unread}")


def _session_name(session_id: str) -> str | None:
    """Claude Code's session id as the memory's session (None, the server's, if no session name)."""
    try:
        return check_session(session_id)
    except InvalidInputError:
        return None
