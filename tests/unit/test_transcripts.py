"""Reading a Claude Code transcript: the user's own prompts and the files changed, whatever else
the file holds; the episode text stays within its caps."""

from __future__ import annotations

import json
from pathlib import Path

from interfaces.transcripts import EPISODE_CHARS, PROMPT_CHARS, SessionRecord, episode_text, read_transcript

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

    assert read_transcript(tmp_path / "gone.jsonl") is None
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
