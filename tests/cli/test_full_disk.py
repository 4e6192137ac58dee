"""`memory_system store` on a full disk (issue #43, item 3): its status and message are what
SQLite holds. Each store runs on a small tmpfs mounted in a private mount namespace
(`unshare -rm`: no root needed, gone with the process) and filled to leave a given room."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hooking import HASH_ENTRY

SWEEP = Path(__file__).with_name("full_disk_sweep.py")
# Bytes left free for each store: SQLite cannot open, then refuses the write, then commits while
# the vector shard has no room (a write to it killed the process with SIGBUS, its flush at close
# failed with a traceback), then there is room for both.
FREE_STEPS = (0, 16384, 65536, 131072, 163840, 196608, 229376, 262144, 327680, 1_000_000, 20_000_000)
# Warning lines a committed store may print: its index write waits in SQLite's outbox.
QUEUED = "Vector index write queued for replay: "


def _namespace_with_tmpfs(mount_point: Path) -> list[str]:
    """The command prefix that runs a shell command with a 100 MB tmpfs at ``mount_point``."""
    return [
        "unshare",
        "-rm",
        "sh",
        "-c",
        f'mount -t tmpfs -o size=100m tmpfs "{mount_point}" && exec "$@"',
        "sh",
    ]


def _skip_without_a_private_mount(mount_point: Path) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("no unshare(1): cannot mount a small tmpfs without root")
    probe = subprocess.run([*_namespace_with_tmpfs(mount_point), "true"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"unshare -rm cannot mount a tmpfs here: {probe.stderr.decode().strip()}")


@pytest.mark.subprocess
def test_store_on_a_full_disk_exits_0_when_the_memory_is_stored_and_1_with_one_line_when_not(
    tmp_path: Path,
) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    _skip_without_a_private_mount(disk)
    command = [sys.executable, str(SWEEP), str(disk), HASH_ENTRY, *map(str, FREE_STEPS)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).parents[2]), *sys.path]))

    swept = subprocess.run(
        [*_namespace_with_tmpfs(disk), *command], capture_output=True, text=True, timeout=300, env=env
    )

    assert swept.returncode == 0, swept.stderr
    *stores, after = [json.loads(line) for line in swept.stdout.splitlines()]
    for store in stores:
        lines = store["stderr"].splitlines()
        assert "Traceback" not in store["stderr"], store
        if store["stored"]:
            assert store["status"] == 0, store
            assert all(line.startswith(QUEUED) for line in lines), store
            assert len(lines) <= 1, store
        else:
            assert store["status"] == 1, store
            assert len(lines) == 1 and lines[0].startswith("Error: "), store
            assert "full" in lines[0], store
    assert {store["stored"] for store in stores} == {True, False}  # the sweep crossed the edge
    assert after["doctor"] == 0, after["doctor_output"]
    assert all(after["recalled"].values()), after


@pytest.mark.subprocess
def test_a_backup_to_a_full_disk_is_one_error_line_and_leaves_no_snapshot(
    data_dir: Path, tmp_path: Path
) -> None:
    from cognitive_memory.encoding import HashEncoder
    from cognitive_memory.main import build_system
    from cognitive_memory.settings import Settings

    small = tmp_path / "small"
    small.mkdir()
    _skip_without_a_private_mount(small)
    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        system.store_many(
            [f"Memory {n} of a store larger than the disk it is backed up to." for n in range(300)]
        )
    finally:
        system.close()
    script = (
        f'mount -t tmpfs -o size=256k tmpfs "{small}" && '
        f'"{sys.executable}" -m memory_system backup "{small}/snapshot"; echo "status $?"; ls -A "{small}"'
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).parents[2]), *sys.path]))

    ran = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, timeout=120, env=env
    )

    lines = [line for line in ran.stderr.splitlines() if not line.startswith("backup: ")]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "is full" in lines[0], ran.stderr
    assert "Free some space" in lines[0]
    assert ran.stdout.splitlines() == ["status 1", ".snapshot.lock"]  # no snapshot, no partial copy
