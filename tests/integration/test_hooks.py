"""What each Claude Code hook answers, composed over the facade (``interfaces.hooks``) on a real
store with the hash encoder: the context's shape and bound, the project of ``cwd``, and one
episode per session, kept up to date and never doubled."""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from cognitive_memory.core.memory import SourceKind
from cognitive_memory.errors import InvalidInputError
from cognitive_memory.service import SHORT_ID_CHARS, MemoryService, RecallFilters, StoreContext
from cognitive_memory.system import CognitiveSystem
from interfaces.hooks import HookAnswer, HookRequest, answer_hook, session_tag
from tests.hooking import fifo

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "claude_code"
SESSION = "3f2c9a1e-5b7d-4e2a-9c11-0d8e6f4b2a77"


@pytest.fixture
def service(hash_system: CognitiveSystem) -> MemoryService:
    return MemoryService(hash_system)


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """A git work tree named ``proj``; the hook runs in a folder inside it."""
    (tmp_path / "proj" / ".git").mkdir(parents=True)
    inside = tmp_path / "proj" / "src"
    inside.mkdir()
    return inside


def _context(answer_stdout: str, event: str) -> str:
    output = json.loads(answer_stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == event
    text: str = output["additionalContext"]
    return text


def _start(service: MemoryService, cwd: Path, max_chars: int = 1500) -> str:
    request = HookRequest("session-start", {"cwd": str(cwd), "source": "startup"}, max_chars)
    return answer_hook(service, request).stdout


def test_session_start_gives_lessons_concepts_and_recent_memories_of_the_cwd_project(
    service: MemoryService, project_dir: Path
) -> None:
    lesson = service.store_session_lesson(
        "Never run the migrations by hand on prod: deploy.sh runs them.", "warning", project="proj"
    )
    concept = service.store_experience(
        "The billing service owns invoices.", StoreContext(hierarchy_level=0, project="proj")
    )
    decision = service.store_experience(
        "We decided to tag images with the commit sha.", StoreContext(hierarchy_level=1, project="proj")
    )
    elsewhere = service.store_experience("Unrelated project note.", StoreContext(project="other"))

    text = _context(_start(service, project_dir), "SessionStart")

    assert text.startswith("Cognitive Memory: what earlier sessions left for project 'proj'")
    lines = text.splitlines()
    assert lines.index("Lessons:") < lines.index("Concepts:") < lines.index("Recent:")
    assert text.count(lesson.lesson_id) == 1  # a warning lesson is also a concept: listed once
    for memory_id in (concept.memory_id, decision.memory_id):
        assert f"[{memory_id}]" in text
    assert elsewhere.memory_id not in text


def test_session_start_leaves_out_memories_loaded_from_files(
    service: MemoryService, hash_system: CognitiveSystem, project_dir: Path
) -> None:
    loaded = hash_system.store(
        "## Setup\nRun make install.", hierarchy_level=1, source=SourceKind.MARKDOWN, project="proj"
    )
    stored = service.store_experience("We chose Postgres over MySQL.", StoreContext(project="proj"))

    text = _context(_start(service, project_dir), "SessionStart")

    assert f"[{stored.memory_id}]" in text and loaded.memory.id not in text


def test_session_start_stays_within_its_bound_and_says_nothing_without_memories(
    service: MemoryService, project_dir: Path
) -> None:
    assert _start(service, project_dir) == ""
    for number in range(30):
        service.store_experience(f"Decision {number}: " + "word " * 80, StoreContext(project="proj"))

    bounded = _context(_start(service, project_dir, max_chars=700), "SessionStart")
    too_small = _start(service, project_dir, max_chars=50)

    assert 0 < len(bounded) <= 700
    assert bounded.count("\n- [") >= 1
    assert too_small == ""


def test_a_prompt_gets_the_memories_recall_finds_with_their_ids(
    service: MemoryService, project_dir: Path
) -> None:
    deploy = service.store_experience(
        "To deploy, run make release then deploy.sh prod.", StoreContext(project="proj")
    )
    request = HookRequest("user-prompt-submit", {"cwd": str(project_dir), "prompt": "deploy make release"})

    text = _context(answer_hook(service, request).stdout, "UserPromptSubmit")

    assert f"[{deploy.memory_id[:SHORT_ID_CHARS]}]" in text  # the short id get_memories takes
    assert "To deploy, run make release" in text
    assert len(text) <= 1500


def test_a_blank_prompt_or_no_room_adds_nothing(service: MemoryService, project_dir: Path) -> None:
    service.store_experience("To deploy, run make release.", StoreContext(project="proj"))
    blank = HookRequest("user-prompt-submit", {"cwd": str(project_dir), "prompt": "  "})
    no_room = HookRequest("user-prompt-submit", {"cwd": str(project_dir), "prompt": "deploy"}, max_chars=0)

    assert answer_hook(service, blank).stdout == ""
    assert answer_hook(service, no_room).stdout == ""


def test_the_requests_project_wins_over_the_cwd(service: MemoryService, project_dir: Path) -> None:
    memory = service.store_experience("Deploys go through the ops box.", StoreContext(project="ops"))
    request = HookRequest("session-start", {"cwd": str(project_dir)}, project="ops")

    assert f"[{memory.memory_id}]" in _context(answer_hook(service, request).stdout, "SessionStart")


def _end_request(transcript: Path, cwd: str = "/x/proj", event: str = "session-end") -> HookRequest:
    payload = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": cwd, "reason": "other"}
    return HookRequest(event, payload)


def _episodes(service: MemoryService) -> list[str]:
    found = service.list_memories(RecallFilters(tags=[session_tag(SESSION)], projects=["*"]))
    return [memory.content for memory in found.memories]


def test_a_session_is_kept_as_one_episode_and_a_second_run_stores_nothing_new(
    service: MemoryService, tmp_path: Path
) -> None:
    transcript = tmp_path / "t.jsonl"
    shutil.copy(FIXTURES / "transcript.jsonl", transcript)

    first = answer_hook(service, _end_request(transcript))
    total = service.show_status().memory_counts.total_memories
    second = answer_hook(service, _end_request(transcript))

    assert first.stdout == second.stdout == ""
    assert first.note is not None and "kept as memory" in first.note
    assert second.note is not None and "unchanged" in second.note
    assert service.show_status().memory_counts.total_memories == total == 1
    [episode] = _episodes(service)
    assert episode.startswith(
        "Claude Code session in project 'proj' (2026-11-23 09:58 to 2026-11-23 10:21 UTC)"
    )
    assert "- The deploy to staging fails with 'image tag not found'." in episode
    assert "Files changed: deploy.sh, CHANGELOG.md." in episode
    stored = service.list_memories(RecallFilters(tags=["claude-code"]), project="proj").memories
    assert [(m.hierarchy_level, m.memory_type, m.project) for m in stored] == [(2, "episodic", "proj")]
    in_session = service.list_memories(RecallFilters(session=SESSION), project="proj").memories
    assert [m.id for m in in_session] == [m.id for m in stored]  # Claude Code's session id is its session


def test_a_grown_transcript_updates_the_same_episode(service: MemoryService, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    shutil.copy(FIXTURES / "transcript.jsonl", transcript)
    answer_hook(service, _end_request(transcript, event="pre-compact"))
    [before] = service.list_memories(RecallFilters(tags=[session_tag(SESSION)], projects=["*"])).memories
    line = {"type": "user", "message": {"role": "user", "content": "Now bump the chart version."}}
    with transcript.open("a") as grown:
        grown.write(json.dumps(line) + "\n")

    answer = answer_hook(service, _end_request(transcript))

    [after] = service.list_memories(RecallFilters(tags=[session_tag(SESSION)], projects=["*"])).memories
    assert answer.note is not None and "(updated)" in answer.note
    assert after.id == before.id
    assert after.content.endswith("- Now bump the chart version.\nFiles changed: deploy.sh, CHANGELOG.md.")


def test_a_session_without_a_readable_transcript_keeps_nothing(
    service: MemoryService, tmp_path: Path
) -> None:
    missing = answer_hook(service, _end_request(tmp_path / "gone.jsonl"))
    empty_file = tmp_path / "empty.jsonl"
    empty_file.write_text('{"type": "summary"}\nnot json\n')
    empty = answer_hook(service, _end_request(empty_file))
    no_ids = answer_hook(service, HookRequest("session-end", {"reason": "other"}))

    assert [missing.stdout, empty.stdout, no_ids.stdout] == ["", "", ""]
    assert service.show_status().memory_counts.total_memories == 0


def _answered_within(seconds: float, service: MemoryService, request: HookRequest) -> HookAnswer:
    """The hook's answer, which must come within ``seconds`` (a blocked reader fails the test, it
    does not hang it)."""
    answers: list[HookAnswer] = []
    worker = threading.Thread(target=lambda: answers.append(answer_hook(service, request)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert answers, f"no answer within {seconds} s"
    return answers[0]


@pytest.fixture(params=["/dev/zero", "a FIFO", "a folder"])
def not_a_file(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    if request.param == "/dev/zero":
        yield Path("/dev/zero")
    elif request.param == "a FIFO":
        with fifo(tmp_path / "t.jsonl") as path:
            yield path
    else:
        (tmp_path / "t.jsonl").mkdir()
        yield tmp_path / "t.jsonl"


def test_a_transcript_that_is_not_a_regular_file_is_refused_unread(
    service: MemoryService, not_a_file: Path
) -> None:
    answer = _answered_within(5, service, _end_request(not_a_file))

    assert answer == HookAnswer(
        note=f"transcript {not_a_file} is not a regular file: nothing read; nothing kept"
    )
    assert service.show_status().memory_counts.total_memories == 0


def _sparse_transcript(path: Path, size: int, first: str, last: str) -> Path:
    """A transcript of ``size`` bytes: the prompt ``first``, one endless line of NUL bytes (a hole
    in the file: no disk used), and the prompt ``last``."""
    lines = [
        json.dumps({"type": "user", "message": {"content": prompt}}).encode() + b"\n"
        for prompt in (first, last)
    ]
    with path.open("wb") as transcript:
        transcript.write(lines[0])
        transcript.seek(size - len(lines[1]) - 1)
        transcript.write(b"\n" + lines[1])
    return path


def _peak_bytes(call: Callable[[], HookAnswer]) -> tuple[HookAnswer, int]:
    tracemalloc.start()
    try:
        answer = call()
        return answer, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_huge_transcript_is_read_in_bounded_memory_and_time_keeping_its_first_and_last_prompts(
    service: MemoryService, tmp_path: Path
) -> None:
    transcript = _sparse_transcript(
        tmp_path / "t.jsonl", 4 * 1024**3, "Fix the deploy script.", "Now tag it."
    )
    started = time.monotonic()

    answer, peak = _peak_bytes(lambda: _answered_within(60, service, _end_request(transcript)))

    assert peak < 100 * 1024**2
    assert time.monotonic() - started < 20
    assert answer.note is not None and "kept as memory" in answer.note
    assert "its middle 4,032 MiB not read; 1 line over 4 MiB skipped" in answer.note
    [episode] = _episodes(service)
    assert episode.splitlines() == [
        "Claude Code session in project 'proj'. The middle 4,032 MiB of its transcript was not read.",
        "The user asked:",
        "- Fix the deploy script.",
        "- Now tag it.",
    ]


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        ([], "a hook request is a JSON object"),
        ({"event": "stop", "payload": {}}, "unknown hook event 'stop'"),
        ({"event": "session-start", "payload": "x"}, "`payload`"),
        ({"event": "session-start", "payload": {}, "max_chars": 10_001}, "`max_chars`"),
        ({"event": "session-start", "payload": {}, "max_chars": True}, "`max_chars`"),
    ],
)
def test_a_malformed_request_is_refused_with_what_is_wrong(message: object, problem: str) -> None:
    with pytest.raises(InvalidInputError, match=re.escape(problem)):
        HookRequest.from_wire(message)


@pytest.mark.parametrize("project", [" ", "a\x01b", "every*", 7])
def test_a_request_naming_an_impossible_project_is_refused(project: object) -> None:
    with pytest.raises(ValidationError):
        HookRequest.from_wire({"event": "session-start", "payload": {}, "project": project})


def test_a_cwd_that_cannot_be_looked_at_works_in_the_default_project(service: MemoryService) -> None:
    memory = service.store_experience("Deploys go through the ops box.")
    request = HookRequest("session-start", {"cwd": "/x/\x00"})

    assert f"[{memory.memory_id}]" in _context(answer_hook(service, request).stdout, "SessionStart")
