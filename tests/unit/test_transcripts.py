"""Reading a Claude Code transcript: the user's own prompts and the files changed, whatever else
the file holds, within its bounds (bytes, line length, time, what is kept); the episode text
stays within its caps."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from cognitive_memory.errors import InvalidInputError
from interfaces import transcripts
from interfaces.transcripts import (
    EPISODE_CHARS,
    PROMPT_CHARS,
    SessionRecord,
    TranscriptBounds,
    episode_text,
    read_transcript,
)

TRANSCRIPT = Path(__file__).resolve().parents[1] / "fixtures" / "claude_code" / "transcript.jsonl"


def test_prompts_skip_commands_meta_lines_tool_results_subagents_and_compaction_summaries() -> None:
    record = read_transcript(TRANSCRIPT, "/x/proj")

    assert record is not None
    assert record.prompts == (
        "The deploy to staging fails with 'image tag not found'. Can you find out why deploy.sh pushes "
        "the wrong tag?",
        "Good. Also add a CHANGELOG entry for the fix",
        "Then run the tests and tell me how we deploy to production from now on.",
    )
    assert record.files == ("deploy.sh", "CHANGELOG.md")  # Read is not a change; the first edit first
    assert (record.started, record.ended) == ("2026-11-23 09:58", "2026-11-23 10:21")


def test_files_outside_the_working_folder_keep_their_whole_path() -> None:
    record = read_transcript(TRANSCRIPT, "/elsewhere")

    assert record is not None and record.files == ("/x/proj/deploy.sh", "/x/proj/CHANGELOG.md")


def test_a_missing_or_meaningless_transcript_reads_as_nothing(tmp_path: Path) -> None:
    odd = tmp_path / "odd.jsonl"
    odd.write_bytes(
        b'\xff\xfe not utf-8\n{"type": "user", "message": "a string"}\n'
        b'{"type": "user", "message": {"content": 42}}\n'
        b'{"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Edit", "input": 3}]}}\n'
        b'{"type": "user", "timestamp": 17}\nnull\n'
    )

    with pytest.raises(InvalidInputError, match="gone.jsonl cannot be read: No such file or directory"):
        read_transcript(tmp_path / "gone.jsonl")
    record = read_transcript(odd)
    assert record is not None and record.empty and record.started is None


def test_a_long_prompt_is_cut(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    line = {"type": "user", "message": {"role": "user", "content": "word " * 500}}
    transcript.write_text(json.dumps(line) + "\n")

    record = read_transcript(transcript)

    assert record is not None
    [prompt] = record.prompts
    assert len(prompt) == PROMPT_CHARS and prompt.endswith("…")


def test_a_long_session_keeps_its_first_and_last_prompts_within_the_episode_cap() -> None:
    prompts = tuple(f"prompt {n} " + "x" * 200 for n in range(60))
    files = tuple(f"src/module_{n}.py" for n in range(100))
    text = episode_text(SessionRecord(prompts, files, "2026-11-23 09:00", "2026-11-23 18:00"), "proj")

    assert len(text) <= EPISODE_CHARS
    lines = text.splitlines()
    assert lines[:3] == [
        "Claude Code session in project 'proj' (2026-11-23 09:00 to 2026-11-23 18:00 UTC).",
        "The user asked:",
        f"- {prompts[0]}",
    ]
    assert f"- {prompts[-1]}" in lines
    assert any(line.startswith("- (") and line.endswith("more prompts)") for line in lines)
    assert lines[-1].startswith("Files changed: src/module_0.py, ") and lines[-1].endswith("more).")


def _prompt_line(text: str) -> bytes:
    return json.dumps({"type": "user", "message": {"content": text}}).encode() + b"\n"


def test_a_transcript_over_the_bound_is_read_at_its_first_quarter_and_its_last_three(tmp_path: Path) -> None:
    lines = [_prompt_line(f"prompt {n:03}") for n in range(200)]
    width, transcript = len(lines[0]), tmp_path / "t.jsonl"
    transcript.write_bytes(b"".join(lines))
    tail_start = 200 * width - 3000

    record = read_transcript(transcript, bounds=TranscriptBounds(max_bytes=4000))

    begun = [n * width for n in range(200)]  # where each line begins
    kept = [n for n in range(200) if begun[n] < 1000 or begun[n] >= tail_start]
    assert record.prompts == tuple(f"prompt {n:03}" for n in kept)
    assert record.unread_bytes == tail_start - 1000
    unread = f"{tail_start - 1000:,} bytes"
    assert record.unread == f"its middle {unread} not read"
    assert episode_text(record, "p").splitlines()[0] == (
        f"Claude Code session in project 'p'. The middle {unread} of its transcript was not read."
    )


def test_a_line_over_the_line_bound_is_skipped_and_the_next_one_read(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_bytes(_prompt_line("first") + _prompt_line("x" * 5000) + _prompt_line("last"))

    record = read_transcript(transcript, bounds=TranscriptBounds(line_bytes=1000))

    assert (record.prompts, record.skipped_lines, record.unread_bytes) == (("first", "last"), 1, 0)


def test_a_session_of_many_prompts_keeps_its_first_and_last_and_counts_the_others(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_bytes(b"".join(_prompt_line(f"p{n}") for n in range(5000)))
    kept = transcripts.PROMPTS_KEPT

    record = read_transcript(transcript)

    assert record.prompts == tuple(f"p{n}" for n in (*range(kept), *range(5000 - kept, 5000)))
    assert record.more_prompts == 5000 - 2 * kept
    text = episode_text(record, "p")
    assert len(text) <= EPISODE_CHARS
    shown = [line for line in text.splitlines() if line.startswith("- p")]
    assert f"- ({5000 - len(shown)} more prompts)" in text


def test_a_transcript_not_read_by_the_deadline_is_refused(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_bytes(_prompt_line("first"))

    with pytest.raises(InvalidInputError, match="t.jsonl was not read within 0 s"):
        read_transcript(transcript, bounds=TranscriptBounds(seconds=0))


def test_a_fifo_swapped_in_after_the_check_is_refused_without_blocking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_bytes(_prompt_line("first"))
    real_open = os.open

    def swap_then_open(path: Path, flags: int, *args: int) -> int:
        if Path(path) == transcript:
            transcript.unlink()
            os.mkfifo(transcript)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", swap_then_open)
    outcome: list[BaseException | SessionRecord] = []

    def read() -> None:
        try:
            outcome.append(read_transcript(transcript))
        except InvalidInputError as exc:
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(5)
    if not outcome:  # blocked in open: a writer lets it go
        os.close(real_open(transcript, os.O_WRONLY | os.O_NONBLOCK))

    [refused] = outcome
    assert isinstance(refused, InvalidInputError)
    assert "was replaced while it was opened" in refused.message
