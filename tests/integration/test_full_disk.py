"""A nearly full disk when the embedded vector store is first created: a clear refusal, not SIGBUS.

The real attack needs a small filesystem: with root (and the right to mount) the tests mount an
8 MB tmpfs; elsewhere they are skipped, and the refusal is still tested through ``free_bytes``, the
seam that reads the free space.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from cognitive_memory.encoding import HashEncoder
from cognitive_memory.errors import StorageError
from cognitive_memory.index import edge_store
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings

MEMORY_SYSTEM = Path(sys.executable).with_name("memory_system")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """An 8 MB tmpfs (with 2-8 MB free, creating the store died of SIGBUS before the fix)."""
    mount_point = tmp_path / f"small-{uuid.uuid4().hex[:6]}"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount_point)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def run(data_dir: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", str(data_dir)),
        "COGNITIVE_MEMORY_DATA_DIR": str(data_dir),
    }
    return subprocess.run(
        [str(MEMORY_SYSTEM), *arguments], env=env, capture_output=True, text=True, timeout=180, check=False
    )


@pytest.mark.subprocess
def test_a_store_on_a_nearly_full_disk_is_refused_with_the_path_and_the_space_needed(
    small_disk: Path,
) -> None:
    data_dir = small_disk / "memory"

    result = run(data_dir, "store", "Stored on a disk with a few megabytes free.")

    assert result.returncode == 1, (result.returncode, result.stderr)  # -7 was SIGBUS
    expected = f"Error: Not enough free space to create the embedded vector store in {data_dir / 'vectors'}"
    assert result.stderr.startswith(expected), result.stderr
    assert "64 MB needed" in result.stderr
    assert not (data_dir / "vectors").exists()


@pytest.mark.subprocess
def test_doctor_on_a_nearly_full_disk_fails_its_qdrant_check_and_lives(small_disk: Path) -> None:
    data_dir = small_disk / "memory"

    result = run(data_dir, "doctor", "--json")

    assert result.returncode == 1, (result.returncode, result.stderr)
    checks = {check["name"]: check for check in json.loads(result.stdout)["checks"]}
    assert checks["qdrant"]["status"] == "fail"
    assert "Not enough free space" in checks["qdrant"]["detail"]
    assert checks["data_dir"]["status"] == "warn"  # under 500 MB free


def test_creation_is_refused_below_the_free_space_it_needs(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(edge_store, "free_bytes", lambda path: 3 * 2**20)

    with pytest.raises(StorageError, match=r"3\.0 MB free on its disk, 64 MB needed") as refused:
        build_system(Settings(env_file=None), encoder=HashEncoder())

    assert refused.value.code == "no_space"
    assert str(data_dir / "vectors") in refused.value.message
    assert not (data_dir / "vectors").exists()


def test_an_existing_store_still_opens_on_a_full_disk(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only creation maps new files; a store that exists is opened as before."""
    build_system(Settings(env_file=None), encoder=HashEncoder()).close()
    monkeypatch.setattr(edge_store, "free_bytes", lambda path: 0)

    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        assert system.vectors.count() == 0
    finally:
        system.close()
