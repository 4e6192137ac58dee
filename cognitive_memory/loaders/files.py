"""Finding and reading the files a loader may read: inside the tree, text, readable.

A directory walk never leaves the tree: a symlinked file is read only when its target lies inside
the tree (under the target's real path, so a file linked twice loads once); symlinked directories
are not followed (so no symlink loop can trap the walk). Hidden directories and ``node_modules``
are not entered. Anything that cannot be read becomes a ``Skipped`` entry with a reason.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MARKDOWN_SUFFIXES",
    "MAX_FILE_BYTES",
    "PRUNED_DIRECTORIES",
    "Skipped",
    "TextFile",
    "is_markdown",
    "read_text",
    "walk_markdown",
]

MARKDOWN_SUFFIXES = (".md", ".markdown")
MAX_FILE_BYTES = 10 * 1024 * 1024
PRUNED_DIRECTORIES = frozenset({"node_modules", "__pycache__"})


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


def walk_markdown(root: Path) -> tuple[list[Path], list[Skipped]]:
    """The markdown files under ``root`` (a resolved directory), by real path, sorted."""
    found: dict[Path, None] = {}
    skipped: list[Skipped] = []

    def unreadable(error: OSError) -> None:
        skipped.append(Skipped(str(error.filename or root), f"cannot list directory: {error.strerror}"))

    for directory, subdirectories, names in os.walk(root, onerror=unreadable):
        here = Path(directory)
        for name in list(subdirectories):
            if name.startswith(".") or name in PRUNED_DIRECTORIES:
                subdirectories.remove(name)
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
    """The real path of ``path`` if it is a regular file inside ``root``, else None (and why)."""
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        reason = "symlink loop" if "loop" in str(exc).lower() else "broken symlink"
        skipped.append(Skipped(str(path), reason))
        return None
    if not resolved.is_relative_to(root):
        skipped.append(Skipped(str(path), f"symlink to {resolved}, outside the loaded tree"))
        return None
    if not resolved.is_file():
        skipped.append(Skipped(str(path), "not a regular file"))
        return None
    return resolved


def read_text(path: Path) -> TextFile | Skipped:
    """Read a file as UTF-8 text, or say why it cannot be loaded."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return Skipped(str(path), f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MB")
        data = path.read_bytes()
    except OSError as exc:
        return Skipped(str(path), f"unreadable: {exc.strerror or exc}")
    if b"\0" in data:
        return Skipped(str(path), "binary file (contains NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Skipped(str(path), f"not UTF-8 text (invalid byte at offset {exc.start})")
    return TextFile(path, text, hashlib.sha256(data).hexdigest())
