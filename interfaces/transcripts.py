"""What a Claude Code session did, read from its transcript (JSONL): the user's prompts and the
files the assistant changed, and the episode text a session is remembered by.

Transcripts change between Claude Code versions, so everything is read defensively: a line that
is not JSON, a field of an unexpected type and a line type not known here are skipped, never an
error. Claude Code's own lines are not prompts: meta lines (``isMeta``), the summary it writes
after compacting (``isCompactSummary``), slash-command echoes (``<command-name>``...), tool
results, and the prompts a subagent received (``isSidechain``).

The path comes with the hook's input, so reading it is bounded (``TranscriptBounds``): only a
regular file is opened (never a FIFO, a device or a folder, and a FIFO swapped in between the
check and the open cannot block it), at most ``MAX_TRANSCRIPT_BYTES`` of it are read (of a
larger one, its first quarter and its last three quarters), a line over ``MAX_LINE_BYTES`` is
skipped, and reading stops at a deadline. What is kept while reading is bounded too, so memory
stays within a few tens of MB whatever the file holds.
"""

from __future__ import annotations

import json
import os
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from cognitive_memory.errors import InvalidInputError
from cognitive_memory.regular_files import NotRegularFileError, open_regular

__all__ = [
    "EPISODE_CHARS",
    "MAX_LINE_BYTES",
    "MAX_TRANSCRIPT_BYTES",
    "PROMPT_CHARS",
    "SessionRecord",
    "TranscriptBounds",
    "episode_text",
    "read_transcript",
]

# Characters kept of one prompt, and of the whole episode.
PROMPT_CHARS = 300
EPISODE_CHARS = 4000
MAX_FILES = 40
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024
MAX_LINE_BYTES = 4 * 1024 * 1024  # a longer line is a large pasted image or file, not a prompt
READ_SECONDS = 10.0
PROMPTS_KEPT = EPISODE_CHARS // 4  # at each end of a session: more never fit ("- x\n" is 4 characters)
FILES_COUNTED = 1000
MAX_PATH_CHARS = 4096  # a longer "file name" is not one
_CHUNK = 1024 * 1024
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
    more_prompts: int = 0  # prompts read but not kept (the middle of a very long session)
    unread_bytes: int = 0  # the middle of a transcript over the bound, not read
    skipped_lines: int = 0  # lines over the bound, not read

    @property
    def empty(self) -> bool:
        return not self.prompts and not self.files

    @property
    def unread(self) -> str:
        """What of the transcript was not read ("" when all of it was)."""
        parts = []
        if self.unread_bytes:
            parts.append(f"its middle {_megabytes(self.unread_bytes)} not read")
        if self.skipped_lines:
            lines = "line" if self.skipped_lines == 1 else "lines"
            parts.append(f"{self.skipped_lines} {lines} over {_megabytes(MAX_LINE_BYTES)} skipped")
        return "; ".join(parts)


@dataclass(frozen=True, slots=True)
class TranscriptBounds:
    """How much of a transcript is read: ``max_bytes`` (of a larger file, its first quarter and
    its last three quarters), lines of at most ``line_bytes`` (a longer one is skipped), all of
    it within ``seconds``."""

    max_bytes: int = MAX_TRANSCRIPT_BYTES
    line_bytes: int = MAX_LINE_BYTES
    seconds: float = READ_SECONDS

    def spans(self, size: int) -> list[tuple[int, int]]:
        """The byte ranges read of a file of ``size`` bytes."""
        if size <= self.max_bytes:
            return [(0, size)]
        head = self.max_bytes // 4
        return [(0, head), (size - (self.max_bytes - head), size)]


def read_transcript(
    path: Path, cwd: str | None = None, bounds: TranscriptBounds | None = None
) -> SessionRecord:
    """The session in the transcript at ``path``, read within ``bounds``; file paths under
    ``cwd`` are given relative to it. InvalidInputError says why it cannot be read (missing,
    not a regular file, not read in time)."""
    bounds = bounds or TranscriptBounds()
    deadline, session = time.monotonic() + bounds.seconds, _Session()
    try:
        with open_regular(path) as reader:
            spans = bounds.spans(os.fstat(reader.fileno()).st_size)
            for start, end in spans:
                for line in _lines(reader, start, end, bounds.line_bytes, deadline):
                    session.read(line)
    except TimeoutError:
        raise InvalidInputError(f"transcript {path} was not read within {bounds.seconds:g} s") from None
    except NotRegularFileError as exc:
        why = "was replaced while it was opened" if exc.replaced else "is not a regular file"
        raise InvalidInputError(f"transcript {path} {why}: nothing read") from None
    except OSError as exc:
        raise InvalidInputError(f"transcript {path} cannot be read: {exc.strerror or exc}") from None
    unread = spans[1][0] - spans[0][1] if len(spans) == 2 else 0
    return session.record(cwd, unread)


def _lines(
    reader: IO[bytes], start: int, end: int, line_bytes: int, deadline: float
) -> Iterator[bytes | None]:
    """The lines that begin in [``start``, ``end``) (not the one ``start`` cuts), None for one over
    ``line_bytes`` (skipped); TimeoutError past ``deadline``."""
    position = start
    if start > 0:
        reader.seek(start - 1)
        position = start - 1 + _skip_line(reader, end - start + 1, deadline)
    while position < end:
        _in_time(deadline)
        line = reader.readline(line_bytes + 1)
        if not line:
            return
        position += len(line)
        if len(line) <= line_bytes:
            yield line
            continue
        if not line.endswith(b"\n"):
            position += _skip_line(reader, end - position, deadline)
        yield None


def _skip_line(reader: IO[bytes], budget: int, deadline: float) -> int:
    """Read through the end of the current line, ``budget`` bytes at most; the bytes read."""
    skipped = 0
    while skipped < budget:
        _in_time(deadline)
        chunk = reader.readline(min(_CHUNK, budget - skipped))
        skipped += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            break
    return skipped


def _in_time(deadline: float) -> None:
    if time.monotonic() >= deadline:
        raise TimeoutError


class _Session:
    """What is kept of a session while its transcript is read: the first and the last
    PROMPTS_KEPT prompts, FILES_COUNTED changed files, the first and last time stamps."""

    def __init__(self) -> None:
        self.first: list[str] = []
        self.last: deque[str] = deque(maxlen=PROMPTS_KEPT)
        self.prompt_count = self.skipped_lines = 0
        self.files: dict[str, None] = {}
        self.started: str | None = None
        self.ended: str | None = None

    def read(self, line: bytes | None) -> None:
        entry = _entry(line)
        if entry is None:
            self.skipped_lines += line is None
            return
        if (prompt := _prompt(entry)) is not None:
            self.prompt_count += 1
            (self.first if len(self.first) < PROMPTS_KEPT else self.last).append(prompt)
        for name in _changed_files(entry):
            if len(self.files) < FILES_COUNTED and len(name) <= MAX_PATH_CHARS:
                self.files[name] = None
        if isinstance(stamp := entry.get("timestamp"), str):
            self.started = stamp if self.started is None else self.started
            self.ended = stamp

    def record(self, cwd: str | None, unread_bytes: int) -> SessionRecord:
        prompts = (*self.first, *self.last)
        return SessionRecord(
            prompts=prompts,
            files=tuple(_shown_path(name, cwd) for name in self.files),
            started=_minute(self.started) if self.started is not None else None,
            ended=_minute(self.ended) if self.ended is not None else None,
            more_prompts=self.prompt_count - len(prompts),
            unread_bytes=unread_bytes,
            skipped_lines=self.skipped_lines,
        )


def _entry(line: bytes | None) -> dict[str, Any] | None:
    if line is None:
        return None
    try:
        entry = json.loads(line.decode("utf-8", errors="replace"))
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None


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
    if record.unread_bytes:
        head += f" The middle {_megabytes(record.unread_bytes)} of its transcript was not read."
    files = list(record.files[:MAX_FILES])
    prompts = list(record.prompts)
    shown = sum(len(prompt) + 3 for prompt in prompts)  # "- {prompt}\n": a bound from below
    while len(prompts) > 2 and shown > EPISODE_CHARS:  # what the loop below would drop, sooner
        shown -= len(prompts.pop(len(prompts) // 2)) + 3
    while True:
        left_out = record.more_prompts + len(record.prompts) - len(prompts)
        text = _compose(head, prompts, files, left_out, len(record.files))
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
        counted = "+" if all_files >= FILES_COUNTED else ""
        more = f" (and {all_files - len(files)}{counted} more)" if all_files > len(files) else ""
        lines.append(f"Files changed: {', '.join(files)}{more}.")
    return "\n".join(lines)


def _megabytes(size: int) -> str:
    return f"{size / 1024 / 1024:,.0f} MiB" if size >= 1024 * 1024 else f"{size:,} bytes"
