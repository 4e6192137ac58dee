"""A `memory_system` command in a real process (hash encoder), optionally killed with SIGKILL:
how crash-safety tests interrupt a write where it really happens."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = ["run_memory_system"]

_WITH_HASH = (
    "import sys, cognitive_memory.main as m; from cognitive_memory.encoding import HashEncoder; "
    "m.model_encoder = lambda settings: HashEncoder(); from memory_system.cli import app; "
    "sys.argv = ['memory_system', *sys.argv[1:]]; app()"
)


def run_memory_system(data_dir: Path, args: Sequence[str], kill_after: float | None = None) -> float:
    """Run ``memory_system ARGS`` on ``data_dir`` with the hash encoder until it ends, or kill -9
    it ``kill_after`` seconds in; the seconds it ran."""
    env = {**os.environ, "COGNITIVE_MEMORY_DATA_DIR": str(data_dir)}
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-c", _WITH_HASH, *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    if kill_after is not None:
        time.sleep(kill_after)
        process.send_signal(signal.SIGKILL)
    process.wait(timeout=120)
    return time.monotonic() - started
