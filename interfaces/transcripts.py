"""What a Claude Code session did, read from its transcript (JSONL): the user's prompts and the
files the assistant changed, and the episode text a session is remembered by.

Transcripts change between Claude Code versions, so everything is read defensively: a line that
is not JSON, a field of an unexpected type and a line type not known here are skipped, never an
error. Claude Code's own lines are not prompts: meta lines (``isMeta``), the summary it writes
after compacting (``isCompactSummary``), slash-command echoes (``<command-name>``...), tool
results, and the prompts a subagent received (``isSidechain``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

__all__ = ["EPISODE_CHARS", "PROMPT_CHARS", "SessionRecord", "episode_text", "read_transcript"]

# Characters kept of one prompt, and of the whole episode.
PROMPT_CHARS = 300
EPISODE_CHARS = 4000
MAX_FILES = 40
# Tools whose input names a file they wrote.
_EDITING_TOOLS = {
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "Write": "file_path",
    "NotebookEdit": "notebook_path",
}
# Prompts Claude Code writes itself, as the user.
_GENERATED_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "Caveat: The messages below were generated",
    "[Request interrupted by user",
)


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """The user's prompts (in order) and the files changed (first change first) of one session."""

    prompts: tuple[str, ...]
    files: tuple[str, ...]
    started: str | None = None
    ended: str | None = None

    @property
    def empty(self) -> bool:
        return not self.prompts and not self.files


def read_transcript(path: Path, cwd: str | None = None) -> SessionRecord | None:
    """The session in the transcript at ``path`` (None when it cannot be read); file paths under
    ``cwd`` are given relative to it."""
    try:
        with path.open(encoding="utf-8", errors="replace") as lines:
            entries = list(_entries(lines))
    except OSError:
        return None
    prompts = [prompt for entry in entries if (prompt := _prompt(entry)) is not None]
    files = dict.fromkeys(name for entry in entries for name in _changed_files(entry))
    stamps = [stamp for entry in entries if isinstance(stamp := entry.get("timestamp"), str)]
    return SessionRecord(
        prompts=tuple(prompts),
        files=tuple(_shown_path(name, cwd) for name in files),
        started=_minute(stamps[0]) if stamps else None,
        ended=_minute(stamps[-1]) if stamps else None,
    )


def _entries(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            yield entry


def _message_content(entry: dict[str, Any], kind: str) -> Any:
    message = entry.get("message")
    if entry.get("type") != kind or not isinstance(message, dict):
        return None
    return message.get("content")


def _prompt(entry: dict[str, Any]) -> str | None:
    """The text the user typed on this line, or None when the line is not a typed prompt."""
    if any(entry.get(flag) is True for flag in ("isMeta", "isCompactSummary", "isSidechain")):
        return None
    content = _message_content(entry, "user")
    if isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
        content = "\n".join(
            b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text" and _is_text(b)
        )
    if not isinstance(content, str):
        return None
    text = " ".join(content.split())
    if not text or text.startswith(_GENERATED_PREFIXES):
        return None
    return text if len(text) <= PROMPT_CHARS else text[: PROMPT_CHARS - 1].rstrip() + "…"


def _is_text(block: dict[str, Any]) -> bool:
    return isinstance(block.get("text"), str)


def _changed_files(entry: dict[str, Any]) -> Iterator[str]:
    content = _message_content(entry, "assistant")
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict) or block.get("type") != "tool_use":
            continue
        field = _EDITING_TOOLS.get(str(block.get("name")))
        given = block.get("input")
        if field and isinstance(given, dict) and isinstance(name := given.get(field), str) and name:
            yield name


def _shown_path(name: str, cwd: str | None) -> str:
    if cwd:
        try:
            return str(Path(name).relative_to(cwd))
        except ValueError:
            pass
    return name


def _minute(stamp: str) -> str | None:
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return None


def episode_text(record: SessionRecord, project: str) -> str:
    """The episode a session is remembered by: when, what the user asked, which files changed;
    at most EPISODE_CHARS (the middle prompts give way first, then the last files)."""
    when = f" ({record.started} to {record.ended} UTC)" if record.started and record.ended else ""
    head = f"Claude Code session in project '{project}'{when}."
    files = list(record.files[:MAX_FILES])
    prompts = list(record.prompts)
    while True:
        text = _compose(head, prompts, files, len(record.prompts) - len(prompts), len(record.files))
        if len(text) <= EPISODE_CHARS:
            return text
        if len(prompts) > 2:
            del prompts[len(prompts) // 2]
        elif files:
            files.pop()
        else:
            return text[: EPISODE_CHARS - 1] + "…"


def _compose(head: str, prompts: list[str], files: list[str], left_out: int, all_files: int) -> str:
    lines = [head]
    if prompts:
        lines.append("The user asked:")
        middle = len(prompts) // 2
        shown = [f"- {p}" for p in prompts]
        if left_out:
            shown.insert(middle, f"- ({left_out} more prompts)")
        lines.extend(shown)
    if files:
        more = f" (and {all_files - len(files)} more)" if all_files > len(files) else ""
        lines.append(f"Files changed: {', '.join(files)}{more}.")
    return "\n".join(lines)
