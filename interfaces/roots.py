"""The project an MCP client's roots stand for: the first root's git top-level folder name, else
the root folder's own name."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from interfaces.requests import MAX_PROJECT_CHARS

__all__ = ["project_of_root"]


def project_of_root(uri: str) -> str | None:
    """The project name for a ``file://`` root, or None when the root is not a local folder."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or not parsed.path:
        return None
    folder = Path(unquote(parsed.path))
    top = next((p for p in (folder, *folder.parents) if (p / ".git").exists()), folder)
    name = "".join(ch for ch in top.name if ch.isprintable() and ch != "*").strip()[:MAX_PROJECT_CHARS]
    return name or None
