"""Run inside a private mount namespace by ``test_full_disk.py``: `memory_system store` of a
2.5 KB text on a small tmpfs (at argv[1]) filled to leave each of argv[3:] bytes free, with the
console script given in argv[2] (``tests.hooking.HASH_ENTRY``). After each store the space is
freed again and one JSON line says how it ended and whether SQLite holds the text; a last line
gives `doctor`'s status and whether recall finds the memories stored on the full disk."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

CHUNK = 64 * 1024


def main(disk: Path, entry: str, free_steps: list[int]) -> None:
    env = dict(os.environ, COGNITIVE_MEMORY_DATA_DIR=str(disk / "data"))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", entry, *args], env=env, capture_output=True, text=True, timeout=120
        )

    # Two stores with room: the first creates the vector shard, the second loads it (a first
    # load allocates the files it maps, ~60 MB here).
    for text in ("The first memory, stored with room.", "The second memory, stored with room."):
        run("store", text, "--json").check_returncode()
    kept: dict[str, str] = {}
    for free in free_steps:
        text = f"On a disk with {free} bytes free: " + " ".join(f"w{free}x{i}" for i in range(400))[:2500]
        _fill(disk, free)
        ended = run("store", text, "--json")
        (disk / "filler").unlink()
        stored = _holds(disk / "data" / "cognitive_memory.db", text)
        if stored:
            kept[str(free)] = text
        result = {"free": free, "status": ended.returncode, "stored": stored, "stderr": ended.stderr}
        print(json.dumps(result), flush=True)
    doctor = run("doctor")
    recalled = {
        free: f"{free} bytes free:" in run("recall", text, "--json").stdout for free, text in kept.items()
    }
    print(json.dumps({"doctor": doctor.returncode, "doctor_output": doctor.stdout, "recalled": recalled}))


def _fill(disk: Path, free: int) -> None:
    """A filler file leaving about ``free`` bytes free on ``disk`` (tmpfs counts whole pages)."""
    with (disk / "filler").open("wb") as filler:
        while (room := shutil.disk_usage(disk).free - free) > 0:
            try:
                filler.write(b"\0" * min(CHUNK, room))
                filler.flush()
            except OSError:
                return


def _holds(database: Path, text: str) -> bool:
    with contextlib.closing(sqlite3.connect(database)) as conn:
        return conn.execute("SELECT 1 FROM memories WHERE content = ?", (text,)).fetchone() is not None


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], [int(step) for step in sys.argv[3:]])
