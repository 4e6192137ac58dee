"""Finding and reading the files a loader may read: inside the tree, text, readable.

A directory walk never leaves the tree: a symlinked file is read only when its target lies inside
the tree (under the target's real path, so a file linked twice loads once); symlinked directories
are not followed (so no symlink loop can trap the walk). Hidden directories and ``node_modules``
are not entered. Anything that cannot be read becomes a ``Skipped`` entry with a reason.

File names are bytes to the operating system; Python hands a name that is not UTF-8 over as text
with surrogate escapes, which no memory, database key or terminal can hold. Such a file or
directory is skipped, named with its odd bytes as ``\\xNN`` escapes (``readable``), and the rest
of the tree loads.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from cognitive_memory.errors import InvalidInputError
from cognitive_memory.regular_files import NotRegularFileError, open_regular

__all__ = [
    "MARKDOWN_SUFFIXES",
    "MAX_FILE_BYTES",
    "NOT_UTF8_NAME",
    "PRUNED_DIRECTORIES",
    "Skipped",
    "TextFile",
    "check_utf8_path",
    "is_markdown",
    "is_utf8_name",
    "read_text",
    "readable",
    "walk_markdown",
]

MARKDOWN_SUFFIXES = (".md", ".markdown")
MAX_FILE_BYTES = 10 * 1024 * 1024
PRUNED_DIRECTORIES = frozenset({"node_modules", "__pycache__"})
NOT_UTF8_NAME = "name is not UTF-8 (bytes that are not are shown as \\xNN): rename it to load it"


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file or directory left out of a load, and why."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class TextFile:
    """A file read as UTF-8 text; ``fingerprint`` is the hash of its bytes."""

    path: Path
    text: str
    fingerprint: str


def is_markdown(path: Path) -> bool:
    return path.suffix.lower() in MARKDOWN_SUFFIXES


def is_utf8_name(path: Path | str) -> bool:
    """Whether the path is text (its name's bytes are UTF-8), not surrogate-escaped bytes."""
    try:
        os.fspath(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def readable(path: Path | str) -> str:
    """The path as printable text: bytes of a name that are not UTF-8 shown as ``\\xNN``."""
    text = os.fspath(path)
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def check_utf8_path(path: Path, why: str = NOT_UTF8_NAME) -> Path:
    """``path`` if its name is UTF-8, else an error that names it readably and says ``why``."""
    if not is_utf8_name(path):
        raise InvalidInputError(f"{readable(path)}: {why}.", code="invalid_path")
    return path


def walk_markdown(root: Path) -> tuple[list[Path], list[Skipped]]:
    """The markdown files under ``root`` (a resolved directory), by real path, sorted."""
    found: dict[Path, None] = {}
    skipped: list[Skipped] = []

    def unreadable(error: OSError) -> None:
        where = readable(error.filename or root)
        skipped.append(Skipped(where, f"cannot list directory: {error.strerror}"))

    for directory, subdirectories, names in os.walk(root, onerror=unreadable):
        here = Path(directory)
        for name in list(subdirectories):
            if name.startswith(".") or name in PRUNED_DIRECTORIES:
                subdirectories.remove(name)
            elif not is_utf8_name(name):
                subdirectories.remove(name)
                skipped.append(Skipped(readable(here / name), f"directory {NOT_UTF8_NAME}"))
            elif (here / name).is_symlink():
                subdirectories.remove(name)
                skipped.append(Skipped(str(here / name), "symlinked directory, not followed"))
        for name in sorted(names):
            path = here / name
            if not is_markdown(path):
                continue
            resolved = _inside(path, root, skipped)
            if resolved is not None:
                found[resolved] = None
    return sorted(found), skipped


def _inside(path: Path, root: Path, skipped: list[Skipped]) -> Path | None:
    """The real path of ``path`` if it is a regular file inside ``root`` with a UTF-8 name, else
    None (and why)."""
    if not is_utf8_name(path):
        skipped.append(Skipped(readable(path), f"file {NOT_UTF8_NAME}"))
        return None
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        reason = "symlink loop" if "loop" in str(exc).lower() else "broken symlink"
        skipped.append(Skipped(str(path), reason))
        return None
    if not resolved.is_relative_to(root):
        skipped.append(Skipped(str(path), f"symlink to {readable(resolved)}, outside the loaded tree"))
        return None
    if not is_utf8_name(resolved):
        skipped.append(Skipped(str(path), f"symlink to {readable(resolved)}, whose {NOT_UTF8_NAME}"))
        return None
    if not resolved.is_file():
        skipped.append(Skipped(str(path), "not a regular file"))
        return None
    return resolved


def read_text(path: Path) -> TextFile | Skipped:
    """Read a file as UTF-8 text, or say why it cannot be loaded."""
    if not is_utf8_name(path):
        return Skipped(readable(path), f"file {NOT_UTF8_NAME}")
    try:
        with open_regular(path) as file:
            if os.fstat(file.fileno()).st_size > MAX_FILE_BYTES:
                return Skipped(str(path), f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MB")
            data = file.read()
    except NotRegularFileError as exc:
        return Skipped(str(path), "replaced while it was read" if exc.replaced else "not a regular file")
    except OSError as exc:
        return Skipped(str(path), f"unreadable: {exc.strerror or exc}")
    if b"\0" in data:
        return Skipped(str(path), "binary file (contains NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Skipped(str(path), f"not UTF-8 text (invalid byte at offset {exc.start})")
    return TextFile(path, text, hashlib.sha256(data).hexdigest())
