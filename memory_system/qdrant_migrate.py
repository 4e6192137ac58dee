"""`memory_system qdrant migrate --to URL`: copy the index to a Qdrant server from SQLite's vectors.

SQLite keeps every memory's vector, so nothing is re-embedded: the copy is
``cognitive_memory.upkeep.migrate_to_server``, over the path that also rebuilds an index.
"""

from __future__ import annotations

from urllib.parse import urlparse

__all__ = ["check_url"]


def check_url(url: str) -> str | None:
    """None when ``url`` looks like a Qdrant HTTP(S) address, else what is wrong with it."""
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        return f"--to must be a Qdrant server URL such as http://localhost:6333, not {url!r}."
    return None
