"""Opening a file that someone else may have put in place, so that opening it cannot hang.

Every file the server reads from a directory another user may write (the data directory of an
older version was made 0777; a user's notes; an import; a hook's transcript) goes through
``open_regular``. Opening a FIFO for reading blocks until a writer comes, and a device such as
/dev/zero never ends, so such a file is refused before it is opened, opened with ``O_NONBLOCK``
(a FIFO swapped in after the look opens at once), and looked at again through the descriptor: the
file opened must be the regular file looked at. The refusal names the file and says what it is.

Writing is the same: a lock file is opened with ``open_lock`` (a FIFO opened for writing blocks
until a reader comes), and a file replaced whole is written with ``write_replacing``, which
opens nothing already there.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "NotRegularFileError",
    "open_lock",
    "open_regular",
    "read_regular",
    "write_beside",
    "write_replacing",
]

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)


class NotRegularFileError(OSError):
    """``path`` is not a regular file that may be read. ``what`` says what it is instead ("a FIFO
    (named pipe)", "a directory", "a symbolic link", "a device", "a socket", or whose it is);
    ``replaced``: it became another file, or no longer a regular one, between the look and the
    open."""

    def __init__(self, path: Path, what: str, *, replaced: bool = False) -> None:
        super().__init__(f"{path} is {what}")
        self.path = path
        self.what = what
        self.replaced = replaced


def open_regular(path: Path, *, follow_symlinks: bool = True, owned: bool = False) -> BinaryIO:
    """The regular file at ``path``, open for reading bytes, opened without blocking.

    Anything else raises ``NotRegularFileError`` naming what it is: a FIFO, a directory, a device,
    a socket; a symbolic link when ``follow_symlinks`` is false; with ``owned``, a file of another
    user. A file swapped in between the look and the open is refused too (``replaced``). A
    missing file raises FileNotFoundError, other failures their OSError."""
    named = os.stat(path, follow_symlinks=follow_symlinks)
    _check(path, named, owned=owned)
    try:
        descriptor = os.open(path, _OPEN_FLAGS | (0 if follow_symlinks else _NO_FOLLOW))
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_symlinks:
            raise NotRegularFileError(path, "a symbolic link", replaced=True) from None
        raise
    try:
        opened = os.fstat(descriptor)
        if (opened.st_dev, opened.st_ino) != (named.st_dev, named.st_ino):
            raise NotRegularFileError(path, "another file than the one looked at", replaced=True)
        _check(path, opened, owned=owned, replaced=True)
        os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    return os.fdopen(descriptor, "rb")


def read_regular(
    path: Path, *, limit: int | None = None, follow_symlinks: bool = True, owned: bool = False
) -> bytes:
    """The bytes of the regular file at ``path`` (at most ``limit``), as ``open_regular`` opens it."""
    with open_regular(path, follow_symlinks=follow_symlinks, owned=owned) as file:
        return file.read() if limit is None else file.read(limit)


def _check(path: Path, state: os.stat_result, *, owned: bool, replaced: bool = False) -> None:
    what = _kind(state.st_mode)
    if what is None and owned and sys.platform != "win32" and state.st_uid != os.getuid():
        what = f"another user's file (owner uid {state.st_uid}; you are uid {os.getuid()})"
    if what is not None:
        raise NotRegularFileError(path, what, replaced=replaced)


def _kind(mode: int) -> str | None:
    """What a file of ``mode`` is when it is not a regular file; None for a regular one."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def open_lock(path: Path) -> BinaryIO:
    """The lock file at ``path`` (made, 0600, when missing), open for appending, for ``flock``.
    Opening never blocks: a FIFO, a directory, a device or a symbolic link in its place raises
    ``NotRegularFileError`` naming it."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0) | _NO_FOLLOW
    try:
        descriptor = os.open(path, flags | getattr(os, "O_NOCTTY", 0), 0o600)
    except OSError as exc:
        # ENXIO: a FIFO no process reads; EISDIR: a directory; ELOOP: a symbolic link.
        if exc.errno not in (errno.ENXIO, errno.EISDIR, errno.ELOOP):
            raise
        raise NotRegularFileError(path, _kind(os.lstat(path).st_mode) or "not a regular file") from None
    try:
        _check(path, os.fstat(descriptor), owned=False)
        os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    return os.fdopen(descriptor, "ab")


def write_beside(path: Path, text: str) -> Path:
    """A new file of mode 0600 beside ``path`` holding ``text`` (UTF-8), its name unique and
    hidden; the caller moves it into place (``os.replace``, or ``os.link`` when the first writer
    must win) and removes it if that fails."""
    descriptor, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return Path(name)


def write_replacing(path: Path, text: str) -> None:
    """Put ``text`` (UTF-8) at ``path`` whole: written to a new file beside it, then moved over it,
    so a reader sees the old file or the new one, and whatever was at ``path`` (a FIFO another user
    put there) is never opened."""
    temporary = write_beside(path, text)
    try:
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
