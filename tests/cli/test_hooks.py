"""`memory_system hook EVENT` as Claude Code runs it: recorded hook inputs through typer's runner
and through the real console script, the output's shape, the settings, and every failure ending
with exit 0, nothing on stdout and one line on stderr."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import cognitive_memory.main
from cognitive_memory.encoding import HashEncoder, SentenceBertEncoder
from cognitive_memory.service import SHORT_ID_CHARS
from cognitive_memory.settings import default_data_dir as settings_data_dir
from interfaces.hooks import HOOK_EVENTS
from memory_system import hook_command
from memory_system.cli import app
from tests.hooking import (
    FIXTURES,
    HASH_ENTRY,
    fake_server,
    fifo,
    hook_input,
    hook_socket_path,
    private_runtime_dir,
    trickling_server,
)

runner = CliRunner()
CONSOLE_SCRIPT = Path(sys.executable).with_name("memory_system")
HEAVY = ("torch", "sentence_transformers", "onnxruntime", "qdrant_client", "qdrant_edge", "mcp", "pydantic")


@pytest.fixture(autouse=True)
def runtime_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Hook sockets in a directory of this test's own (no other process's server answers)."""
    with private_runtime_dir() as directory:
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(directory))
        for name in (
            "COGNITIVE_MEMORY_HOOK_TIMEOUT",
            "COGNITIVE_MEMORY_HOOK_MAX_CHARS",
            "COGNITIVE_MEMORY_PROJECT",
        ):
            monkeypatch.delenv(name, raising=False)
        yield directory


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands run in this process open the memory with the hash encoder."""
    monkeypatch.setattr(cognitive_memory.main, "model_encoder", lambda settings: HashEncoder())


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The folder Claude Code runs in: a git work tree named ``proj``."""
    (tmp_path / "proj" / ".git").mkdir(parents=True)
    return tmp_path / "proj"


def _run(
    args: list[str], stdin: str, *, entry: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """The console script (or ``python -c entry``) in a real process, as Claude Code starts it."""
    command = [sys.executable, "-c", entry, *args] if entry else [str(CONSOLE_SCRIPT), *args]
    return subprocess.run(
        command, input=stdin, capture_output=True, text=True, timeout=120, env={**os.environ, **env}
    )


def test_the_client_knows_every_event_the_server_answers() -> None:
    assert tuple(HOOK_EVENTS) == hook_command.EVENTS


@pytest.mark.parametrize("xdg", [None, "/srv/xdg-data"])
def test_the_clients_default_data_directory_is_the_settings_one(
    xdg: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if xdg is None:
        monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_DATA_HOME", xdg)

    assert hook_command.default_data_dir() == settings_data_dir()


def test_hook_settings_come_from_the_environment_then_dotenv(tmp_path: Path, data_dir: Path) -> None:
    (tmp_path / ".env").write_text(
        "COGNITIVE_MEMORY_HOOK_MAX_CHARS=500\nCOGNITIVE_MEMORY_HOOK_TIMEOUT=3\nCOGNITIVE_MEMORY_PROJECT=web\n"
    )

    from_dotenv = hook_command.hook_options({})
    overridden = hook_command.hook_options({"COGNITIVE_MEMORY_HOOK_MAX_CHARS": "900"})

    assert (from_dotenv.max_chars, from_dotenv.timeout, from_dotenv.project) == (500, 3.0, "web")
    assert from_dotenv.data_dir == settings_data_dir().resolve()  # .env does not set it here
    assert overridden.max_chars == 900


def test_an_unusable_hook_setting_is_reported_and_its_default_used(
    capsys: pytest.CaptureFixture[str],
) -> None:
    options = hook_command.hook_options(
        {"COGNITIVE_MEMORY_HOOK_MAX_CHARS": "lots", "COGNITIVE_MEMORY_HOOK_TIMEOUT": "-1"}
    )

    assert (options.max_chars, options.timeout) == (1500, hook_command.DEFAULT_TIMEOUT)
    assert len(capsys.readouterr().err.splitlines()) == 2


@pytest.mark.model
def test_a_prompt_gets_the_deploy_memory_of_its_project_and_an_unrelated_prompt_nothing(
    project: Path, monkeypatch: pytest.MonkeyPatch, real_encoder: SentenceBertEncoder
) -> None:
    monkeypatch.setattr(cognitive_memory.main, "model_encoder", lambda settings: real_encoder)
    deploy_text = "To deploy, run make release, then ./deploy.sh prod from the ops box."
    stored = runner.invoke(app, ["store", deploy_text, "--project", "proj", "--json"])
    deploy_id = json.loads(stored.stdout)["memory_id"]
    runner.invoke(app, ["store", "To deploy the website, push to the pages branch.", "--project", "site"])

    deploy = runner.invoke(
        app, ["hook", "user-prompt-submit"], input=hook_input("user_prompt_submit", project / "src")
    )
    unrelated = runner.invoke(
        app,
        ["hook", "user-prompt-submit"],
        input=hook_input("user_prompt_submit", project, prompt="What is the capital of France?"),
    )

    assert deploy.exit_code == 0, deploy.output
    context = json.loads(deploy.stdout)["hookSpecificOutput"]
    assert context["hookEventName"] == "UserPromptSubmit"
    shown = f"[{deploy_id[:SHORT_ID_CHARS]}]"  # as a brief recall shows it: get_memories takes it
    assert shown in context["additionalContext"] and deploy_text in context["additionalContext"]
    assert "pages branch" not in context["additionalContext"]  # another project's memory
    assert (unrelated.exit_code, unrelated.stdout) == (0, "")


@pytest.mark.usefixtures("hashed")
def test_session_start_prints_the_project_context_within_the_bound(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for number in range(12):
        runner.invoke(
            app, ["store", f"Decision {number}: we keep the deploy scripts in ops/.", "--project", "proj"]
        )
    monkeypatch.setenv("COGNITIVE_MEMORY_HOOK_MAX_CHARS", "400")

    result = runner.invoke(app, ["hook", "session-start"], input=hook_input("session_start", project))

    assert result.exit_code == 0, result.output
    output = json.loads(result.stdout)
    assert list(output) == ["hookSpecificOutput"]
    assert output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert 0 < len(output["hookSpecificOutput"]["additionalContext"]) <= 400


@pytest.mark.usefixtures("hashed")
def test_session_end_stores_one_episode_and_a_second_run_nothing_new(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    shutil.copy(FIXTURES / "transcript.jsonl", transcript)
    given = hook_input("session_end", "/x/proj", transcript)

    first = runner.invoke(app, ["hook", "session-end", "--wait"], input=given)
    second = runner.invoke(app, ["hook", "session-end", "--wait"], input=given)

    assert (first.exit_code, first.stdout, second.exit_code, second.stdout) == (0, "", 0, "")
    assert "kept as memory" in first.stderr and "unchanged" in second.stderr
    status = json.loads(runner.invoke(app, ["status", "--json"]).stdout)
    assert status["memory_counts"]["total_memories"] == 1


@pytest.mark.usefixtures("hashed")
@pytest.mark.parametrize("kind", ["/dev/zero", "a FIFO"])
def test_session_end_with_a_device_or_a_fifo_as_transcript_reads_nothing_and_keeps_nothing(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COGNITIVE_MEMORY_HOOK_TIMEOUT", "5")
    with contextlib.ExitStack() as stack:
        transcript = Path(kind) if kind == "/dev/zero" else stack.enter_context(fifo(tmp_path / "t.jsonl"))
        given = hook_input("session_end", "/x/proj", transcript)
        result = runner.invoke(app, ["hook", "session-end", "--wait"], input=given)

    assert (result.exit_code, result.stdout) == (0, "")
    note = f"transcript {transcript} is not a regular file: nothing read; nothing kept"
    assert result.stderr == f"memory_system hook session-end: {note}\n"
    status = json.loads(runner.invoke(app, ["status", "--json"]).stdout)
    assert status["memory_counts"]["total_memories"] == 0


def test_an_ending_session_without_a_server_is_kept_by_a_detached_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[dict[str, Any]] = []

    class Pipe(io.BytesIO):
        def close(self) -> None:
            started[-1]["input"] = self.getvalue()
            super().close()

    class Recorder:
        def __init__(self, args: list[str], **options: Any) -> None:
            started.append({"args": args, **options})
            self.stdin = Pipe()

    monkeypatch.setattr(subprocess, "Popen", Recorder)
    given = hook_input("session_end")

    result = runner.invoke(app, ["hook", "session-end"], input=given)

    assert (result.exit_code, result.stdout) == (0, "")
    [child] = started
    assert child["args"][1:] == ["-m", "memory_system", "hook", "session-end", "--wait"]
    assert child["start_new_session"] is True
    assert child["stdout"] == child["stderr"] == subprocess.DEVNULL  # Claude Code waits for open pipes
    assert float(child["env"]["COGNITIVE_MEMORY_HOOK_TIMEOUT"]) == hook_command.BACKGROUND_TIMEOUT
    assert json.loads(child["input"]) == json.loads(given)


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (["hook", "user-prompt-submit"], "this is not json"),
        (["hook", "user-prompt-submit"], "[1, 2]"),
        (["hook", "session-start"], ""),
        (["hook", "stop"], "{}"),
        (["hook"], "{}"),
    ],
)
@pytest.mark.subprocess
def test_bad_input_prints_nothing_and_exits_0_with_one_line_on_stderr(args: list[str], stdin: str) -> None:
    result = _run(args, stdin)

    assert (result.returncode, result.stdout) == (0, "")
    assert len(result.stderr.splitlines()) == 1, result.stderr


@pytest.mark.subprocess
def test_endless_input_is_refused_at_its_bound_not_read_to_the_deadline() -> None:
    with Path("/dev/zero").open("rb") as zeros:
        result = subprocess.run(
            [str(CONSOLE_SCRIPT), "hook", "session-end", "--wait"],
            stdin=zeros,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "COGNITIVE_MEMORY_HOOK_TIMEOUT": "5"},
        )

    assert (result.returncode, result.stdout) == (0, "")
    bound = f"{hook_command.MAX_INPUT_CHARS:,}"
    assert result.stderr == f"memory_system hook session-end: the hook input is over {bound} characters\n"


@pytest.mark.subprocess
def test_a_broken_store_gives_exit_0_and_no_output(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    broken = str(tmp_path / "a-file" / "data")

    result = _run(
        ["hook", "user-prompt-submit"],
        hook_input("user_prompt_submit"),
        entry=HASH_ENTRY,
        COGNITIVE_MEMORY_DATA_DIR=broken,
    )

    assert (result.returncode, result.stdout) == (0, "")
    assert len(result.stderr.splitlines()) == 1 and "is a file, not a directory" in result.stderr


@pytest.mark.subprocess
def test_past_its_deadline_the_cold_path_gives_up_with_no_output(project: Path) -> None:
    result = _run(
        ["hook", "session-start"],
        hook_input("session_start", project),
        entry=HASH_ENTRY,
        COGNITIVE_MEMORY_HOOK_TIMEOUT="0.001",
    )

    assert (result.returncode, result.stdout) == (0, "")
    assert "gave up after 0.001 s (COGNITIVE_MEMORY_HOOK_TIMEOUT)" in result.stderr


@pytest.mark.subprocess
def test_a_stalled_server_makes_the_hook_give_up_without_opening_the_memory(data_dir: Path) -> None:
    with fake_server(hook_socket_path(data_dir, "4242.sock"), reply=None) as requests:
        result = _run(
            ["hook", "user-prompt-submit"],
            hook_input("user_prompt_submit"),
            COGNITIVE_MEMORY_HOOK_TIMEOUT="0.5",
        )

    assert (result.returncode, result.stdout) == (0, "")
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert len(requests) == 1
    assert not data_dir.exists()  # it did not fall back to opening the memory itself


@pytest.mark.slow
def test_a_server_trickling_its_answer_is_given_up_on_after_the_servers_two_seconds(data_dir: Path) -> None:
    with trickling_server(hook_socket_path(data_dir, "4242.sock"), every=1.5):
        started = time.monotonic()
        result = runner.invoke(app, ["hook", "user-prompt-submit"], input=hook_input("user_prompt_submit"))
        took = time.monotonic() - started

    assert (result.exit_code, result.stdout) == (0, "")
    assert "did not answer in time" in result.stderr
    assert hook_command.SERVER_SECONDS <= took < hook_command.SERVER_SECONDS + 1  # not the hook's 10 s
    assert not data_dir.exists()


def test_entries_of_the_socket_folder_that_are_not_sockets_are_skipped(data_dir: Path) -> None:
    answered = '{"hookSpecificOutput": {}}'
    reply: dict[str, object] = {"stdout": answered, "note": None}
    with fake_server(hook_socket_path(data_dir, "4242.sock"), reply) as requests:
        not_sockets = [hook_socket_path(data_dir, "9998.sock"), hook_socket_path(data_dir, "9999.sock")]
        not_sockets[0].write_text("")
        not_sockets[1].mkdir()
        for path in not_sockets:  # newer than the live socket: tried first
            os.utime(path, (time.time() + 60, time.time() + 60))

        result = runner.invoke(app, ["hook", "user-prompt-submit"], input=hook_input("user_prompt_submit"))

    assert (result.exit_code, result.stdout, result.stderr) == (0, answered + "\n", "")
    assert len(requests) == 1
    assert all(path.exists() for path in not_sockets)  # left alone: they are not a dead server's


@pytest.mark.subprocess
def test_the_console_scripts_fast_path_asks_the_server_and_imports_nothing_heavy(data_dir: Path) -> None:
    reply = {"stdout": '{"hookSpecificOutput": {}}', "note": None}
    with fake_server(hook_socket_path(data_dir, "4242.sock"), reply) as requests:
        result = subprocess.run(
            [sys.executable, "-X", "importtime", str(CONSOLE_SCRIPT), "hook", "user-prompt-submit"],
            input=hook_input("user_prompt_submit"),
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "COGNITIVE_MEMORY_PROJECT": "web"},
        )

    assert (result.returncode, result.stdout) == (0, reply["stdout"] + "\n")
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in result.stderr.splitlines()}
    assert "memory_system" in imported
    assert imported.isdisjoint(HEAVY + ("typer", "cognitive_memory", "interfaces"))
    [request] = [json.loads(line) for line in requests]
    assert (request["event"], request["max_chars"], request["project"]) == ("user-prompt-submit", 1500, "web")
    assert request["payload"]["prompt"] == "how do we deploy?"


@pytest.mark.usefixtures("hashed")
def test_a_socket_folder_others_could_write_to_is_not_trusted(data_dir: Path, project: Path) -> None:
    path = hook_socket_path(data_dir, "4242.sock")
    path.parent.chmod(0o755)
    with fake_server(
        path, reply={"stdout": "an answer from a socket anyone could have put there"}
    ) as requests:
        result = runner.invoke(app, ["hook", "session-start"], input=hook_input("session_start", project))

    assert (result.exit_code, result.stdout, requests) == (0, "", [])
    assert "not a private directory of yours" in result.stderr


@pytest.mark.usefixtures("hashed")
@pytest.mark.subprocess
def test_a_dead_servers_socket_is_removed_and_the_memory_opened_in_process(
    data_dir: Path, project: Path
) -> None:
    runner.invoke(app, ["store", "Releases are cut on Tuesdays.", "--project", "proj"])
    dead = hook_socket_path(data_dir, "1.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as gone:
        gone.bind(str(dead))  # a server killed with -9: its socket file stays, refusing connections

    result = _run(["hook", "session-start"], hook_input("session_start", project), entry=HASH_ENTRY)

    assert result.returncode == 0, result.stderr
    assert (
        "Releases are cut on Tuesdays."
        in json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    )
    assert not dead.exists()
