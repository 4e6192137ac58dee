"""`memory_system hook EVENT`: answer a Claude Code hook. Its JSON input comes on stdin; what
Claude Code should add to the model's context goes to stdout (``hookSpecificOutput`` JSON), or
nothing at all; everything else goes to stderr.

Fast path: a running ``memory_system serve mcp`` of the same data directory listens on a socket
in ``socket_folder(data_dir)`` (one per server process, ``<pid>.sock``); the newest that answers
composes the answer (``interfaces.hooks``), so the hook loads neither the encoder nor the store.
Sockets of servers that are gone are removed. Cold path (no server): the hook opens the memory
in-process and calls the same function; ``session-end`` and ``pre-compact`` then go on in a
detached process, because Claude Code gives a session's end hooks about 1.5 s.

A hook must never block or break the prompt: whatever fails (no store, bad input, a server that
does not answer, the deadline ``COGNITIVE_MEMORY_HOOK_TIMEOUT``), it prints nothing on stdout,
one line on stderr, and exits 0 (never 2, which would refuse the prompt).

Only light modules of the standard library are imported here at first: ``entry`` dispatches
``hook`` before typer, pydantic or the core are imported; the cold path imports them itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import stat
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import typer

__all__ = [
    "BACKGROUND_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "EVENTS",
    "HookOptions",
    "SERVER_SECONDS",
    "answer",
    "default_data_dir",
    "hook_options",
    "run",
    "socket_folder",
]

EVENTS = ("session-start", "user-prompt-submit", "session-end", "pre-compact")
_ENDING = ("session-end", "pre-compact")
DEFAULT_TIMEOUT = 10.0  # the whole hook; the cold path takes 1-3 s here (docs/claude-code.md)
SERVER_SECONDS = 2.0  # a running server that has not answered by then is given up on
MAX_REPLY_BYTES = 1024 * 1024  # a context is at most 10,000 characters; more is not a server of ours
BACKGROUND_TIMEOUT = 120.0  # a detached session-end (it blocks no one)
DEFAULT_MAX_CHARS = 1500
MAX_INPUT_CHARS = 4 * 1024 * 1024  # of the hook input on stdin (the server takes a request of 4 MiB at most)
MAX_CONTEXT_CHARS = 10_000
_APP_DIR_NAME = "cognitive-memory"


class HookFailure(Exception):
    """Why a hook gives up (one line on stderr)."""


class HookOptions(NamedTuple):
    """The hook's settings: the data directory, its deadline, its bound on context, a project."""

    data_dir: Path
    timeout: float = DEFAULT_TIMEOUT
    max_chars: int = DEFAULT_MAX_CHARS
    project: str | None = None


# Set by ``run``: this process ends with ``os._exit`` once the hook is answered.
_ends_with_exit = False


def run(argv: list[str]) -> None:
    """``memory_system hook EVENT [--wait]`` as the console script runs it: answer, print, and
    end the process at once (a cold path abandoned at its deadline may still be loading)."""
    if not argv or argv[0].startswith("-"):
        _log("give the event: " + ", ".join(EVENTS))
        os._exit(0)
    global _ends_with_exit
    _ends_with_exit = True
    stdout = answer(argv[0], wait="--wait" in argv[1:])
    if stdout:
        try:
            sys.stdout.write(stdout + "\n")
            sys.stdout.flush()
        except OSError as exc:
            _log(f"stdout closed: {exc}")
    sys.stderr.flush()
    os._exit(0)


def answer(event: str, *, wait: bool = False) -> str:
    """What hook ``event`` prints for the input on stdin ("" for nothing); never raises. ``wait``:
    an ending session is kept in this process, not a detached one. Its one line on stderr is
    written here, so a hook given up on at its deadline says only that."""
    options = hook_options(os.environ)
    started = time.monotonic()
    result: list[tuple[str, str | None]] = []
    worker = threading.Thread(
        target=lambda: result.append(_outcome(event, options, started + options.timeout, wait)),
        name="hook",
        daemon=True,
    )
    worker.start()
    worker.join(options.timeout)
    if not result:
        _log(f"{event}: gave up after {options.timeout:g} s (COGNITIVE_MEMORY_HOOK_TIMEOUT)")
        return ""
    stdout, note = result[0]
    if note:
        _log(f"{event}: {note}")
    return stdout


def _outcome(event: str, options: HookOptions, deadline: float, wait: bool) -> tuple[str, str | None]:
    """What the hook prints and its line for stderr (a failure is one; None for none)."""
    try:
        return _answer(event, options, deadline, wait)
    except HookFailure as exc:
        return "", str(exc)
    except Exception as exc:  # the hook's top-level handler: a hook must never break the prompt
        return "", f"{type(exc).__name__}: {exc}"


def _answer(event: str, options: HookOptions, deadline: float, wait: bool) -> tuple[str, str | None]:
    if event not in EVENTS:
        raise HookFailure(f"unknown event; one of {', '.join(EVENTS)}")
    raw = sys.stdin.read(MAX_INPUT_CHARS + 1)
    if len(raw) > MAX_INPUT_CHARS:
        raise HookFailure(f"the hook input is over {MAX_INPUT_CHARS:,} characters")
    try:
        payload = json.loads(raw)
    except ValueError as exc:
        raise HookFailure(f"the hook input is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise HookFailure("the hook input is not a JSON object")
    request = {"event": event, "payload": payload, "max_chars": options.max_chars, "project": options.project}
    reply = _from_server(request, options, deadline)
    if reply is None and event in _ENDING and not wait:
        _detach(event, raw)
        return "", None
    if reply is None:
        reply = _in_process(request)
    if reply.get("error") is not None:
        raise HookFailure(str(reply["error"]))
    stdout, note = reply.get("stdout"), reply.get("note")
    return (stdout if isinstance(stdout, str) else ""), (str(note) if note else None)


# -- settings, read without pydantic (importing it costs ~0.3 s) -----------------------------------


def hook_options(environ: Mapping[str, str]) -> HookOptions:
    """The hook's settings from ``environ``, else ``.env`` in the working directory (as Settings
    reads them); a value that cannot be used is reported on stderr and its default used."""
    values = _with_dotenv(environ)
    timeout = _number(values, "COGNITIVE_MEMORY_HOOK_TIMEOUT", DEFAULT_TIMEOUT, 0.001, 3600.0)
    max_chars = _number(values, "COGNITIVE_MEMORY_HOOK_MAX_CHARS", DEFAULT_MAX_CHARS, 0, MAX_CONTEXT_CHARS)
    project = (values.get("COGNITIVE_MEMORY_PROJECT") or "").strip() or None
    folder = (values.get("COGNITIVE_MEMORY_DATA_DIR") or "").strip()
    data_dir = Path(folder) if folder else default_data_dir()
    return HookOptions(data_dir.expanduser().resolve(), float(timeout), int(max_chars), project)


def _with_dotenv(environ: Mapping[str, str]) -> Mapping[str, str]:
    if not Path(".env").is_file():
        return environ
    from dotenv import dotenv_values

    found = {key.upper(): value for key, value in dotenv_values(".env").items() if value is not None}
    return {**found, **environ}


def _number(values: Mapping[str, str], name: str, default: float, low: float, high: float) -> float:
    text = (values.get(name) or "").strip()
    if not text:
        return default
    try:
        value = int(text) if isinstance(default, int) else float(text)
    except ValueError:
        value = low - 1
    if not low <= value <= high:
        _log(f"{name}={text!r} is not a number from {low:g} to {high:g}; using {default:g}")
        return default
    return value


def default_data_dir() -> Path:
    """``cognitive_memory.settings.default_data_dir`` without importing pydantic (a test keeps the
    two the same)."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / _APP_DIR_NAME
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local")) / _APP_DIR_NAME
    xdg = os.environ.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "share") / _APP_DIR_NAME


def socket_folder(data_dir: Path) -> tuple[Path, str]:
    """The folder of the hook sockets of the servers of ``data_dir`` (resolved), under the private
    socket directory the vector store also uses; and the variable that moves that directory."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        base, variable = Path(runtime), "XDG_RUNTIME_DIR"
    else:
        import tempfile

        base, variable = Path(tempfile.gettempdir()) / f"cm-{os.getuid()}", "TMPDIR"
    digest = hashlib.sha256(str(data_dir).encode()).hexdigest()[:16]
    return base / f"cm-hooks-{digest}", variable


# -- the fast path ----------------------------------------------------------------------------------


def _from_server(request: dict[str, Any], options: HookOptions, deadline: float) -> dict[str, Any] | None:
    """The answer of the newest running server, or None when none is running."""
    if not hasattr(socket, "AF_UNIX"):
        return None
    folder, variable = socket_folder(options.data_dir)
    if not _private(folder, follow_parent=variable == "XDG_RUNTIME_DIR"):
        return None
    line = json.dumps(request, ensure_ascii=False).encode() + b"\n"
    for path in _newest_first(folder):
        reply = _ask(path, line, min(deadline, time.monotonic() + SERVER_SECONDS))
        if reply is not None:
            return reply
    return None


def _private(folder: Path, *, follow_parent: bool) -> bool:
    """Whether ``folder`` and its parent are this user's, closed to others (as the server's
    ``private_socket_dir`` made them): only then are its sockets this user's (or root's) servers."""
    for directory, follow in ((folder, False), (folder.parent, follow_parent)):
        try:
            state = os.stat(directory, follow_symlinks=follow)
        except OSError:
            return False
        if not stat.S_ISDIR(state.st_mode) or state.st_uid != os.getuid() or state.st_mode & 0o077:
            _log(f"ignoring {directory}: not a private directory of yours")
            return False
    return True


def _newest_first(folder: Path) -> list[Path]:
    """The sockets in ``folder``, newest first; anything else there (a folder or a file named
    ``<n>.sock``) is not a server and is skipped."""
    found = []
    for path in folder.glob("*.sock"):
        try:
            state = path.lstat()
        except OSError:
            continue
        if stat.S_ISSOCK(state.st_mode):
            found.append((state.st_mtime, path))
    return [path for _, path in sorted(found, reverse=True)]


def _ask(path: Path, line: bytes, until: float) -> dict[str, Any] | None:
    """The server's reply on ``path``, the whole exchange done by ``until``; None when no server
    is there (a dead one's socket is removed); HookFailure when one is there but does not answer
    in time (a byte now and then does not buy more time) or answers badly."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        try:
            sock.settimeout(_left(until))
            sock.connect(str(path))
        except (ConnectionRefusedError, FileNotFoundError):
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        except TimeoutError:
            raise HookFailure(f"the server at {path} did not answer in time") from None
        except OSError as exc:  # not ours to remove (no permission, gone strange): try the next
            _log(f"skipping {path}: {exc}")
            return None
        try:
            sock.sendall(line)
            reply = json.loads(_receive_line(sock, until))
        except TimeoutError:
            raise HookFailure(f"the server at {path} did not answer in time") from None
        except (OSError, ValueError) as exc:
            raise HookFailure(f"the server at {path} answered badly: {exc}") from None
    if not isinstance(reply, dict):
        raise HookFailure(f"the server at {path} answered badly: not a JSON object")
    return reply


def _left(until: float) -> float:
    """Seconds left until ``until``; TimeoutError when none are."""
    left = until - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left


def _receive_line(sock: socket.socket, until: float) -> bytes:
    """One reply line, received by ``until``; ValueError past MAX_REPLY_BYTES."""
    data = bytearray()
    while b"\n" not in data:
        sock.settimeout(_left(until))
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        data.extend(chunk)
        if len(data) > MAX_REPLY_BYTES:
            raise ValueError(f"a reply over {MAX_REPLY_BYTES} bytes")
    return bytes(data.split(b"\n", 1)[0])


# -- the cold path ----------------------------------------------------------------------------------


def _in_process(request: dict[str, Any]) -> dict[str, Any]:
    """The answer with the memory opened in this process (the same function a server calls)."""
    import typer

    from interfaces.hooks import HookRequest, answer_hook
    from memory_system.opening import open_facade

    hook = HookRequest.from_wire(request)
    if _ends_with_exit:
        from memory_system import serving

        serving.ends_with_exit_now()  # the vector shard stays in the page cache for the next hook
    try:
        with open_facade() as service:
            result = answer_hook(service, hook)
    except typer.Exit:
        raise HookFailure("") from None  # the CLI has printed its one "Error:" line
    return {"stdout": result.stdout, "note": result.note}


def _detach(event: str, raw: str) -> None:
    """Keep an ending session in a process of its own: the hook returns at once."""
    import subprocess

    env = {**os.environ, "COGNITIVE_MEMORY_HOOK_TIMEOUT": str(BACKGROUND_TIMEOUT)}
    child = subprocess.Popen(
        [sys.executable, "-m", "memory_system", "hook", event, "--wait"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    if child.stdin is not None:
        with child.stdin:
            child.stdin.write(raw.encode())


def _log(message: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"memory_system hook {' '.join(message.split())}\n")


def register(app: typer.Typer) -> None:
    """Add the ``hook`` command to the typer app (the console script answers it before typer)."""
    import typer

    @app.command("hook")
    def hook(
        event: str = typer.Argument(help="session-start, user-prompt-submit, session-end or pre-compact."),
        wait: bool = typer.Option(False, "--wait", help="Keep an ending session before returning."),
    ) -> None:
        """Answer a Claude Code hook: its JSON input on stdin, context for the model on stdout.
        Never fails the prompt: problems are one line on stderr, and the exit status is 0."""
        stdout = answer(event, wait=wait)
        if stdout:
            typer.echo(stdout)
