"""Whether a process still runs: how scratch files left by a killed process are told from those
of one still at work."""

from __future__ import annotations

import os

__all__ = ["is_running"]


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
