"""A running server answers Claude Code hooks on a socket of its own (``interfaces.hook_socket``),
in the folder ``hook_command.socket_folder`` names for its data directory: ``<pid>.sock``."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from memory_system import serving
from memory_system.hook_command import socket_folder

if TYPE_CHECKING:
    from cognitive_memory.settings import Settings
    from cognitive_memory.system import CognitiveSystem
    from interfaces.hook_socket import HookListener

__all__ = ["hooks_answered"]

logger = logging.getLogger(__name__)

_SOCKET_NAME_MAX = 104  # bytes in sun_path on macOS, the terminating NUL included


@contextmanager
def hooks_answered(system: CognitiveSystem, settings: Settings) -> Iterator[None]:
    """Answer hooks over ``system`` while the block runs (and until a stopping signal); then the
    socket is removed, and its folder when no other server uses it. Where no socket can be made,
    hooks open the memory themselves."""
    listener = _listen(system, settings)
    if listener is not None:
        serving.on_stop(lambda: _stop(listener))
    try:
        yield
    finally:
        if listener is not None:
            _stop(listener)


def _stop(listener: HookListener) -> None:
    listener.close()
    with contextlib.suppress(OSError):  # another server's socket is still in it
        listener.path.parent.rmdir()


def _listen(system: CognitiveSystem, settings: Settings) -> HookListener | None:
    from cognitive_memory.errors import ConfigurationError
    from cognitive_memory.service import MemoryService
    from interfaces.hook_socket import HookListener
    from interfaces.hooks import answer_hook

    if not hasattr(os, "getuid"):  # no Unix sockets (Windows)
        return None
    folder, variable = socket_folder(settings.storage.data_dir.expanduser().resolve())
    path = folder / f"{os.getpid()}.sock"
    service = MemoryService(system)
    try:
        if len(os.fsencode(path)) >= _SOCKET_NAME_MAX:
            raise ConfigurationError(f"{path} is too long for a Unix socket: set {variable} shorter")
        for attempt in (1, 2):
            _private_folder(folder, variable)
            try:
                return HookListener(path, lambda request: answer_hook(service, request))
            except FileNotFoundError:  # a server leaving removed the empty folder meanwhile
                if attempt == 2:
                    raise
    except ConfigurationError as exc:
        logger.warning("Claude Code hooks will load the memory themselves: %s", exc.message)
    except OSError as exc:
        logger.warning("Claude Code hooks will load the memory themselves: %s (%s)", exc, path)
    return None


def _private_folder(folder: Path, variable: str) -> None:
    from cognitive_memory.settings import private_socket_dir

    private_socket_dir(folder.parent, variable, follow_links=variable != "TMPDIR")
    private_socket_dir(folder, variable, follow_links=False)
