"""The project a folder stands for (an MCP client's first root, a Claude Code hook's ``cwd``): its
git top-level folder name, else the folder's own name."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from cognitive_memory.core.validation import MAX_PROJECT_CHARS

__all__ = ["project_of_path", "project_of_root"]


def project_of_root(uri: str) -> str | None:
    """The project name for a ``file://`` root, or None when the root is not a local folder."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or not parsed.path:
        return None
    return project_of_path(Path(unquote(parsed.path)))


def project_of_path(folder: Path) -> str | None:
    """The name of the git work tree holding ``folder`` (its top level), else of ``folder`` itself;
    None when that name has nothing usable (the file system's root)."""
    top = next((p for p in (folder, *folder.parents) if (p / ".git").exists()), folder)
    name = "".join(ch for ch in top.name if ch.isprintable() and ch != "*").strip()[:MAX_PROJECT_CHARS]
    return name or None
