"""How a command opens the memory: its settings, a freshly built system, the facade over it.

Shared by the CLI (``memory_system.cli``) and the hooks' cold path (``hook_command``), so neither
imports the other. Heavy imports happen inside the functions, as in the CLI.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from cognitive_memory.encoding import Encoder
    from cognitive_memory.service import MemoryService
    from cognitive_memory.settings import Settings
    from cognitive_memory.system import CognitiveSystem

__all__ = ["fail", "load_settings", "open_facade", "open_system", "resolve_settings"]


def fail(message: str) -> typer.Exit:
    """Print ``Error: <message>`` on stderr; the exit (code 1) for the caller to raise."""
    typer.echo(f"Error: {message}", err=True)
    return typer.Exit(code=1)


def load_settings() -> Settings:
    """``resolve_settings``, with a setting that cannot be used as one ``Error:`` line (exit 1)."""
    from cognitive_memory.errors import CognitiveMemoryError

    try:
        return resolve_settings()
    except CognitiveMemoryError as exc:
        raise fail(exc.message) from None


def resolve_settings() -> Settings:
    """Settings from the environment and .env; without QDRANT_URL, a Qdrant server that
    `memory_system qdrant start` runs for this data directory is used when it answers."""
    from cognitive_memory.settings import Settings
    from memory_system import qdrant_server

    settings = Settings()
    if settings.storage.qdrant_url is None:
        managed = qdrant_server.load_state(settings.storage.data_dir.expanduser())
        if managed is not None and qdrant_server.probe(managed.url) is not None:
            settings.storage.qdrant_url = managed.url
        elif managed is not None:
            logging.getLogger(__name__).warning(
                "The Qdrant server started for this data directory (%s) does not answer; using the "
                "embedded store, whose index may miss what was stored meanwhile: run "
                "`memory_system qdrant start` again, or `memory_system doctor --repair`.",
                managed.url,
            )
    return settings


@contextmanager
def open_system(settings: Settings | None = None, *, serving: bool = False) -> Iterator[CognitiveSystem]:
    """A freshly built system, closed afterwards; core errors become one line and exit 1. A server
    (``serving``) starts loading an ONNX model at once, on a thread, where a core is idle (its
    imports of the MCP SDK then overlap the load), opens the vector store at its first store or
    recall, not before its handshake, and reads what recall ranks by into memory after its first
    recall (``replicas``)."""
    from cognitive_memory.errors import CognitiveMemoryError
    from cognitive_memory.main import build_system, keep_shards_until_exit
    from memory_system.serving import ending_with_exit_now

    if ending_with_exit_now():
        keep_shards_until_exit()
    try:
        system = build_system(settings or load_settings(), open_index_later=serving, follow_changes=serving)
    except CognitiveMemoryError as exc:
        raise fail(exc.message) from exc
    if serving and _loads_beside_imports(system.encoder):
        system.warm_up_in_background()
    answered = False
    try:
        yield system
        answered = True
    except CognitiveMemoryError as exc:
        raise fail(exc.message) from exc
    finally:
        _close(system, answered)


def _loads_beside_imports(encoder: Encoder) -> bool:
    """Whether the model loads while the server imports the MCP SDK: ONNX Runtime from its export
    (torch, configured or until the export is made, holds Python's GIL for seconds while it
    imports), on a machine with a core to spare. With none the load took the imports' CPU and
    delayed the handshake, so it waits for the server's lifespan, after the handshake
    (docs/performance-history.md, "Start-up alone")."""
    from cognitive_memory.encoding import OnnxEncoder

    if not isinstance(encoder, OnnxEncoder) or not encoder.loads_quickly:
        return False
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average (Windows)
        load = 0.0
    return (os.cpu_count() or 1) - load >= 1


def _close(system: CognitiveSystem, answered: bool) -> None:
    """Close ``system``; a failure to (a full disk: the vector index cannot flush) changes no
    answer. SQLite has committed or refused every write by then, and what the index did not take
    stays queued and is replayed, so the command keeps its status: after an answer, one warning
    line; after an ``Error:`` line, nothing more (the details at debug level)."""
    from cognitive_memory.errors import CognitiveMemoryError

    try:
        system.close()
    except CognitiveMemoryError as exc:
        if answered:
            typer.echo(f"Warning: {exc.message}", err=True)
        logging.getLogger(__name__).debug("Closing the memory system failed", exc_info=True)


@contextmanager
def open_facade(settings: Settings | None = None) -> Iterator[MemoryService]:
    """A MemoryService over a freshly built system (see ``open_system``)."""
    from cognitive_memory.service import MemoryService

    settings = settings or load_settings()
    with open_system(settings) as system:
        yield MemoryService(system, project=settings.scope.project)
