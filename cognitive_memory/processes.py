"""Other processes: whether one still runs (how scratch files left by a killed process are told
from those of one still at work), the Unix sockets this user's processes talk over, and a
background thread that yields the CPU to the ones serving."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import struct
import threading
from collections.abc import Callable
from pathlib import Path

__all__ = ["accept_trusted", "is_running", "listen_privately", "socket_peer", "trusted_uid", "yield_cpu"]

logger = logging.getLogger(__name__)

_PEER_CREDENTIALS = struct.Struct("3i")  # struct ucred: pid, uid, gid


def is_running(pid: int) -> bool:
    """True while a process with this id exists (also one of another user: signalling it is
    refused, which still says it is there)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def yield_cpu() -> None:
    """Give the calling thread the lowest CPU priority (nice 19), where the OS has thread
    priorities (Linux: a thread is a task of its own): the OS then runs it when a core would
    otherwise idle. A process cannot raise a priority again, so only threads whose work may wait
    call this (``use_log``'s writes). Elsewhere, or when refused, nothing changes."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)


def socket_peer(connection: socket.socket) -> tuple[int, int] | None:
    """(pid, uid) of the process at the other end of a Unix socket, where the OS says (Linux)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    pid, uid, _ = _PEER_CREDENTIALS.unpack(
        connection.getsockopt(socket.SOL_SOCKET, option, _PEER_CREDENTIALS.size)
    )
    return pid, uid


def trusted_uid(uid: int) -> bool:
    """Memories, vectors and queries go only to (and come only from) this user's processes, or root's."""
    return uid in (os.getuid(), 0)


def listen_privately(path: Path) -> socket.socket:
    """A Unix socket listening at ``path``, for this user only (mode 0600). What is at ``path``
    is removed first: callers own the name (a socket left by a process that is gone)."""
    path.unlink(missing_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    os.chmod(path, 0o600)
    listener.listen(16)
    return listener


def accept_trusted(
    listener: socket.socket, closed: threading.Event, serve: Callable[[socket.socket], None], what: str
) -> None:
    """Accept connections until ``closed`` is set or ``listener`` closes: another user's process
    is refused (logged, naming ``what`` it asked for), every other connection goes to ``serve``."""
    while not closed.is_set():
        try:
            connection, _ = listener.accept()
        except OSError:
            return
        peer = socket_peer(connection)
        if peer is not None and not trusted_uid(peer[1]):
            logger.warning("Refused uid %d (pid %d) a connection to %s", peer[1], peer[0], what)
            connection.close()
            continue
        serve(connection)
