"""What the hook tests share: recorded Claude Code hook inputs, a short private runtime directory
for the hook sockets, a FIFO as a transcript, and fake servers on those sockets (one that
answers a canned line, one that accepts and never answers, one that trickles its answer a byte
at a time)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from memory_system.hook_command import socket_folder

__all__ = [
    "FIXTURES",
    "HASH_ENTRY",
    "fake_server",
    "hook_input",
    "fifo",
    "hook_socket_path",
    "private_runtime_dir",
    "trickling_server",
]

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "claude_code"
# The console script's entry point (`hook` answered before typer), with the hash encoder on the
# cold path; argv[1:] are the command's arguments.
HASH_ENTRY = (
    "import sys, cognitive_memory.main as m; from cognitive_memory.encoding import HashEncoder; "
    "m.model_encoder = lambda settings: HashEncoder(); from memory_system.entry import main; "
    "sys.argv = ['memory_system', *sys.argv[1:]]; main()"
)
PYTHON = sys.executable


def hook_input(name: str, cwd: Path | str = "/x/proj", transcript: Path | None = None, **fields: str) -> str:
    """The recorded input ``name`` (a file of FIXTURES) for ``cwd``, with ``fields`` replaced."""
    payload = json.loads((FIXTURES / f"{name}.json").read_text())
    payload["cwd"] = str(cwd)
    payload["transcript_path"] = str(transcript or FIXTURES / "transcript.jsonl")
    payload.update(fields)
    return json.dumps(payload)


@contextlib.contextmanager
def fifo(path: Path) -> Iterator[Path]:
    """A FIFO at ``path`` that no process writes to (a reader that opened it is let go at the end)."""
    os.mkfifo(path)
    try:
        yield path
    finally:
        with contextlib.suppress(OSError):  # no reader: ENXIO
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


@contextlib.contextmanager
def private_runtime_dir() -> Iterator[Path]:
    """A short directory of mode 0700 (socket names are at most 103 bytes; pytest's are long)."""
    with tempfile.TemporaryDirectory(prefix="cmh", dir="/tmp") as name:
        os.chmod(name, 0o700)
        yield Path(name)


def hook_socket_path(data_dir: Path, name: str) -> Path:
    """Where a server of ``data_dir`` named ``name`` listens (its folder made, private)."""
    folder, _ = socket_folder(data_dir.resolve())
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder / name


@contextlib.contextmanager
def fake_server(path: Path, reply: dict[str, object] | None) -> Iterator[list[bytes]]:
    """A server on ``path`` that reads one request line per connection and answers ``reply``
    (None: never answers, the connection stays open until the end); yields the requests read."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(4)
    requests: list[bytes] = []
    held: list[socket.socket] = []
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            held.append(connection)
            data = b""
            while b"\n" not in data and (chunk := connection.recv(65536)):
                data += chunk
            requests.append(data)
            if reply is not None:
                connection.sendall(json.dumps(reply).encode() + b"\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield requests
    finally:
        done.set()
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        for connection in held:
            connection.close()
        thread.join(5)
        path.unlink(missing_ok=True)


@contextlib.contextmanager
def trickling_server(path: Path, every: float) -> Iterator[None]:
    """A server on ``path`` that reads one request line, then sends one byte every ``every``
    seconds and never a whole line, until its client hangs up or the block ends."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    done = threading.Event()

    def serve() -> None:
        with contextlib.suppress(OSError):
            connection, _ = listener.accept()
            with connection:
                data = b""
                while b"\n" not in data and (chunk := connection.recv(65536)):
                    data += chunk
                while not done.wait(every):
                    connection.sendall(b" ")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(5)
        path.unlink(missing_ok=True)
