"""Other processes: whether one still runs (how scratch files left by a killed process are told
from those of one still at work), and who is at the other end of a Unix socket."""

from __future__ import annotations

import os
import socket
import struct

__all__ = ["is_running", "socket_peer", "trusted_uid"]

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
