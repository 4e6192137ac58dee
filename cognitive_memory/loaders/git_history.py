"""Reading a repository's history with the ``git`` command line.

Why a ``git`` subprocess rather than a library: it adds no dependency (anyone with a repository
has git; GitPython would itself run git commands, pygit2 brings libgit2, dulwich diffs in pure
Python), one ``git log`` call streams the whole history with per-file line counts far faster than
diffing trees commit by commit from Python, and ``-M`` gives exactly git's own rename detection,
the one the user sees in ``git log``. The output is read with ``-z`` (paths NUL-terminated and
never quoted, a rename as two paths, so neither ``old => new`` nor ``dir/{a => b}/f`` needs
parsing), so no file name can be misread.

Each commit arrives as ``\\x1e sha \\x1f parents \\x1f author-time \\x1f message \\x1f \\0`` followed
by its numstat entries (``added\\tdeleted\\tpath\\0`` or ``added\\tdeleted\\t\\0old\\0new\\0``; a binary
file has ``-`` counts). Merge commits carry no numstat entries (git shows no diff for them by
default), so a merge contributes its parents but no file list.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from cognitive_memory.errors import InvalidInputError

__all__ = [
    "Commit",
    "FileChange",
    "commit_from_digest",
    "commit_to_digest",
    "count_commits",
    "files_at",
    "head_commit",
    "is_ancestor",
    "parse_log",
    "read_commits",
    "repository_root",
]

_RECORD, _FIELD = b"\x1e", b"\x1f"
_FORMAT = "--format=%x1e%H%x1f%P%x1f%at%x1f%B%x1f"
_HEADER = re.compile(rb"[0-9a-f]{40}(?:[0-9a-f]{24})?\x1f")
_READ_BYTES = 1 << 16
# Read-only commands must not take locks a concurrent git command of the user would trip over,
# and user configuration must not change what `git log` prints.
_ENVIRONMENT = {"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
_CONFIG = ("-c", "log.showSignature=false", "-c", "core.quotePath=false")


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file of a commit; ``old_path`` is set for a rename; counts are None for binary files."""

    path: str
    added: int | None
    deleted: int | None
    old_path: str | None = None


@dataclass(frozen=True, slots=True)
class Commit:
    """A commit as read from ``git log``; ``time`` is the author date in Unix seconds."""

    sha: str
    parents: tuple[str, ...]
    time: int
    message: str
    files: tuple[FileChange, ...] = ()

    @property
    def subject(self) -> str:
        return self.message.strip().split("\n", 1)[0].strip()

    @property
    def body(self) -> str:
        parts = self.message.strip().split("\n", 1)
        return parts[1].strip() if len(parts) > 1 else ""

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1


def _executable() -> str:
    executable = shutil.which("git")
    if executable is None:
        raise InvalidInputError("git is not installed (or not on PATH): install git to load history.")
    return executable


def _git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    result = subprocess.run(
        [_executable(), *_CONFIG, "-C", str(root), *args],
        capture_output=True,
        env={**os.environ, **_ENVIRONMENT},
        check=False,
    )
    if check and result.returncode != 0:
        raise InvalidInputError(f"git {args[0]} failed in {root}: {_first_line(result.stderr)}")
    return result


def _first_line(stderr: bytes) -> str:
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[0] if lines else "no message"


def repository_root(path: Path) -> Path:
    """The real path of the working tree that contains ``path``, or InvalidInputError."""
    resolved = path.expanduser().resolve()
    if not resolved.exists():
        raise InvalidInputError(f"{path} does not exist.", code="not_found")
    directory = resolved if resolved.is_dir() else resolved.parent
    result = _git(directory, "rev-parse", "--show-toplevel", check=False)
    if result.returncode != 0:
        raise InvalidInputError(
            f"{path} is not a git repository ({_first_line(result.stderr)}).", code="not_a_repository"
        )
    return Path(result.stdout.decode("utf-8", "surrogateescape").strip()).resolve()


def head_commit(root: Path) -> str | None:
    """The commit HEAD points at, or None in a repository without commits."""
    result = _git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
    if result.returncode != 0:
        return None
    return result.stdout.decode().strip() or None


def is_ancestor(root: Path, ancestor: str, descendant: str) -> bool:
    """Whether ``ancestor`` is reachable from ``descendant`` (False when it no longer exists)."""
    return _git(root, "merge-base", "--is-ancestor", ancestor, descendant, check=False).returncode == 0


def files_at(root: Path, commit: str) -> frozenset[str]:
    """The paths of the files in ``commit``'s tree."""
    output = _git(root, "ls-tree", "-r", "-z", "--name-only", commit).stdout
    return frozenset(_text(name) for name in output.split(b"\0") if name)


def count_commits(root: Path, head: str, since: str | None = None) -> int:
    """How many commits ``read_commits`` will yield (``git rev-list --count``, fast)."""
    revision = f"{since}..{head}" if since else head
    return int(_git(root, "rev-list", "--count", revision, "--").stdout.decode().strip() or 0)


def read_commits(root: Path, head: str, since: str | None = None) -> Iterator[Commit]:
    """The commits reachable from ``head`` (and not from ``since``), newest first, streamed."""
    revision = f"{since}..{head}" if since else head
    command = ["log", "-z", "--numstat", "-M", "--topo-order", "--no-ext-diff", "--no-color", _FORMAT]
    # stderr goes to a file: a pipe nobody reads while stdout streams could fill up (git warns per
    # commit when rename detection gives up) and stall git.
    with (
        tempfile.TemporaryFile() as errors,
        subprocess.Popen(
            [_executable(), *_CONFIG, "-C", str(root), *command, revision, "--"],
            stdout=subprocess.PIPE,
            stderr=errors,
            env={**os.environ, **_ENVIRONMENT},
        ) as process,
    ):
        if process.stdout is None:
            raise InvalidInputError("git log could not be started.")
        yield from parse_log(_chunks(process.stdout))
        if process.wait() != 0:
            errors.seek(0)
            raise InvalidInputError(f"git log failed in {root}: {_first_line(errors.read())}")


def _chunks(stream: IO[bytes]) -> Iterator[bytes]:
    while chunk := stream.read(_READ_BYTES):
        yield chunk


def parse_log(chunks: Iterable[bytes]) -> Iterator[Commit]:
    """Commits from the raw output of ``git log -z --numstat`` with the module's format, read
    chunk by chunk. A message that happens to contain the record separator stays whole."""
    buffer = b""
    for chunk in chunks:
        buffer += chunk
        *complete, last = _records(buffer)
        for record in complete:
            yield _commit(record)
        buffer = _RECORD + last
    for record in _records(buffer):
        if record:
            yield _commit(record)


def _records(data: bytes) -> list[bytes]:
    """Split at the separators that start a commit header; the last record may be incomplete."""
    records: list[bytes] = []
    for piece in data.split(_RECORD)[1:]:
        if records and not _HEADER.match(piece):
            records[-1] += _RECORD + piece
        else:
            records.append(piece)
    return records or [b""]


def _commit(record: bytes) -> Commit:
    sha, parents, time, rest = record.split(_FIELD, 3)
    message, _, stats = rest.rpartition(_FIELD + b"\0")
    return Commit(
        sha=sha.decode(),
        parents=tuple(parents.decode().split()),
        time=int(time or b"0"),
        message=_text(message).strip(),
        files=tuple(_numstat(stats.lstrip(b"\n").split(b"\0"))),
    )


def _numstat(tokens: Sequence[bytes]) -> Iterator[FileChange]:
    i = 0
    while i < len(tokens):
        if not tokens[i].strip(b"\n"):
            i += 1
            continue
        added, deleted, path = tokens[i].lstrip(b"\n").split(b"\t", 2)
        counts = (_count(added), _count(deleted))
        if path:
            yield FileChange(_text(path), *counts)
            i += 1
        else:
            yield FileChange(_text(tokens[i + 2]), *counts, old_path=_text(tokens[i + 1]))
            i += 3


def _count(value: bytes) -> int | None:
    return None if value == b"-" else int(value)


def _text(value: bytes) -> str:
    return value.decode("utf-8", "replace")


def commit_to_digest(commit: Commit) -> str:
    """A compact JSON form of a commit, kept per repository so patterns can be recomputed."""
    files = [[f.path, f.added, f.deleted, f.old_path] for f in commit.files]
    return json.dumps([commit.sha, list(commit.parents), commit.time, commit.message, files])


def commit_from_digest(digest: str) -> Commit:
    """The commit a digest describes."""
    sha, parents, time, message, files = json.loads(digest)
    return Commit(sha, tuple(parents), time, message, tuple(FileChange(*f) for f in files))
