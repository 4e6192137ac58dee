"""The fast path: a server's hook socket answers the hook client with the same composition the
cold path uses, survives bad requests, and is gone when the server is; a real `serve mcp`
process answers a real `memory_system hook` process."""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cognitive_memory.service import MemoryService, StoreContext
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem
from interfaces import hook_socket
from interfaces.hook_socket import HookListener
from interfaces.hooks import answer_hook
from memory_system import hook_command
from memory_system.hook_server import hooks_answered
from tests.hooking import HASH_ENTRY, hook_input, hook_socket_path, private_runtime_dir

CONSOLE_SCRIPT = Path(sys.executable).with_name("memory_system")
DEPLOY = "To deploy, run make release then deploy.sh prod."


@pytest.fixture(autouse=True)
def runtime_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    with private_runtime_dir() as directory:
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(directory))
        yield directory


@pytest.fixture
def listener(hash_system: CognitiveSystem, data_dir: Path) -> Iterator[HookListener]:
    service = MemoryService(hash_system)
    service.store_experience(DEPLOY, StoreContext(project="proj"))
    served = HookListener(hook_socket_path(data_dir, "1.sock"), lambda request: answer_hook(service, request))
    yield served
    served.close()


def _exchange(path: Path, line: bytes) -> dict[str, object]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect(str(path))
        sock.sendall(line)
        with sock.makefile("rb") as reader:
            reply: dict[str, object] = json.loads(reader.readline())
        return reply


def test_the_client_gets_its_answer_from_the_listener_not_from_an_opened_memory(
    listener: HookListener, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cold(request: object) -> None:
        raise AssertionError("the cold path ran")

    monkeypatch.setattr(hook_command, "_in_process", cold)
    monkeypatch.setattr(
        sys, "stdin", io.StringIO(hook_input("user_prompt_submit", prompt="deploy make release"))
    )

    printed = hook_command.answer("user-prompt-submit")

    context = json.loads(printed)["hookSpecificOutput"]
    assert context["hookEventName"] == "UserPromptSubmit" and DEPLOY in context["additionalContext"]


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (b"not json\n", "a hook request is one line of JSON"),
        (b'{"event": "stop", "payload": {}}\n', "unknown hook event 'stop'"),
        (b'{"event": "session-start", "payload": [], "max_chars": 10}\n', "`payload`"),
        (b'{"event": "session-start", "payload": {}, "project": "a\\u0001b"}\n', "invalid hook input"),
    ],
)
def test_a_bad_request_is_answered_with_an_error_and_the_listener_serves_on(
    listener: HookListener, line: bytes, error: str
) -> None:
    bad = _exchange(listener.path, line)
    good = _exchange(
        listener.path,
        json.dumps({"event": "session-start", "payload": {"cwd": "/x/proj"}, "max_chars": 1500}).encode()
        + b"\n",
    )

    assert error in str(bad["error"])
    assert DEPLOY in str(good["stdout"])


def test_a_client_that_hangs_up_early_does_not_stop_the_listener(listener: HookListener) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(listener.path))
        sock.sendall(b'{"event": "session-st')

    reply = _exchange(listener.path, b'{"event": "session-start", "payload": {"cwd": "/x/proj"}}\n')

    assert DEPLOY in str(reply["stdout"])


def test_the_server_reads_no_transcript_from_a_device_and_answers_at_once(
    listener: HookListener, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(hook_command, "_in_process", lambda request: pytest.fail("the cold path ran"))
    monkeypatch.setattr(sys, "stdin", io.StringIO(hook_input("session_end", transcript=Path("/dev/zero"))))
    started = time.monotonic()

    printed = hook_command.answer("session-end")

    assert printed == "" and time.monotonic() - started < hook_command.SERVER_SECONDS
    note = "transcript /dev/zero is not a regular file: nothing read; nothing kept"
    assert capsys.readouterr().err == f"memory_system hook session-end: {note}\n"


def test_a_client_trickling_its_request_is_dropped_at_the_read_deadline(
    listener: HookListener, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hook_socket, "READ_SECONDS", 1.0)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(listener.path))
        sock.settimeout(0.25)  # a byte every quarter second: well inside any per-read timeout
        started, closed = time.monotonic(), False
        while not closed and time.monotonic() - started < 5:
            try:
                sock.sendall(b" ")
                closed = sock.recv(1) == b""
            except TimeoutError:
                continue
            except OSError:  # the server closed first: a reset
                closed = True
        took = time.monotonic() - started

    assert closed and took < 2


def test_a_server_listens_for_its_data_directory_and_removes_its_socket_when_done(
    hash_system: CognitiveSystem, data_dir: Path
) -> None:
    folder, _ = hook_command.socket_folder(data_dir.resolve())

    with hooks_answered(hash_system, Settings(env_file=None)):
        sockets = list(folder.iterdir())
        assert [path.name for path in sockets] == [f"{os.getpid()}.sock"]
        assert (folder.stat().st_mode & 0o777, sockets[0].stat().st_mode & 0o777) == (0o700, 0o600)

    assert not folder.exists()


def test_a_server_leaving_keeps_the_folder_another_server_still_listens_in(
    hash_system: CognitiveSystem, data_dir: Path
) -> None:
    folder, _ = hook_command.socket_folder(data_dir.resolve())
    other = hook_socket_path(data_dir, "1.sock")
    other.touch()

    with hooks_answered(hash_system, Settings(env_file=None)):
        pass

    assert list(folder.iterdir()) == [other]


def _initialize(server: subprocess.Popen[bytes]) -> None:
    """The MCP handshake's first answer: by then the server listens for hooks."""
    assert server.stdin is not None and server.stdout is not None
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    server.stdin.write(json.dumps(request).encode() + b"\n")
    server.stdin.flush()
    assert json.loads(server.stdout.readline())["id"] == 1


@pytest.mark.parametrize("ending", ["stdin closed", "SIGTERM"])
@pytest.mark.subprocess
def test_a_running_server_answers_the_hook_process_and_takes_its_socket_away_on_exit(
    data_dir: Path, ending: str
) -> None:
    env = dict(os.environ)
    stored = subprocess.run(
        [sys.executable, "-c", HASH_ENTRY, "store", DEPLOY, "--project", "proj"], env=env, capture_output=True
    )
    assert stored.returncode == 0, stored.stderr
    server = subprocess.Popen(
        [sys.executable, "-c", HASH_ENTRY, "serve", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        _initialize(server)
        hook = subprocess.run(
            [str(CONSOLE_SCRIPT), "hook", "user-prompt-submit"],
            input=hook_input("user_prompt_submit", prompt="deploy make release"),
            capture_output=True,
            text=True,
            timeout=60,
        )
        folder, _ = hook_command.socket_folder(data_dir.resolve())
        assert [path.name for path in folder.iterdir()] == [f"{server.pid}.sock"]
    finally:
        if ending == "SIGTERM":  # stdin still open: only the signal ends it
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=60)
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=60)
        if server.stdout is not None:
            server.stdout.close()

    assert hook.returncode == 0, hook.stderr
    assert hook.stdout, hook.stderr
    assert DEPLOY in json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
    assert server.returncode == 0
    assert not folder.exists()
    assert not (data_dir / "vectors.sock").exists()  # the vector index's socket goes too
