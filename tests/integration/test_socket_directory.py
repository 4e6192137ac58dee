"""The owner's socket lives in a directory nobody else can write to, or nowhere (issue #15)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from cognitive_memory.errors import ConfigurationError, StorageError, StoreLockedError
from cognitive_memory.index import ArrayVectorStore, VectorPoint
from cognitive_memory.index.shared_store import SharedVectorStore
from cognitive_memory.settings import Settings

MEMORY_SYSTEM = Path(sys.executable).with_name("memory_system")
NOBODY = 65534
SYSTEM_PYTHON = Path("/usr/bin/python3")  # the test's own interpreter may be closed to other users
as_root = pytest.mark.skipif(os.getuid() != 0, reason="acting as another user needs root")


@pytest.fixture
def long_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data directory whose socket path is too long for a Unix socket name."""
    directory = tmp_path / ("d" * 100)
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(directory))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    return directory


@pytest.fixture
def shared_tmp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A /tmp of our own (short enough for socket names), where ``cm-<uid>`` is made or squatted."""
    directory = Path(tempfile.mkdtemp(prefix="cm-test-", dir="/tmp"))
    directory.chmod(0o1777)
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    yield directory
    shutil.rmtree(directory)


def status_command(data_dir: Path, tmp: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", str(tmp)),
        "COGNITIVE_MEMORY_DATA_DIR": str(data_dir),
        "TMPDIR": str(tmp),
        **extra,
    }
    return subprocess.run(
        [str(MEMORY_SYSTEM), "status"], env=env, capture_output=True, text=True, timeout=120, check=False
    )


@as_root
@pytest.mark.subprocess
def test_a_socket_directory_made_by_another_user_is_refused_by_a_real_command(
    long_data_dir: Path, shared_tmp: Path
) -> None:
    squatted = shared_tmp / f"cm-{os.getuid()}"
    squatted.mkdir()
    os.chown(squatted, NOBODY, NOBODY)
    squatted.chmod(0o777)

    result = status_command(long_data_dir, shared_tmp)

    assert result.returncode == 1
    assert result.stderr.startswith(f"Error: Refusing to put the vector store's socket in {squatted}")
    assert f"belongs to uid {NOBODY}" in result.stderr
    assert "Traceback" not in result.stderr
    assert list(squatted.iterdir()) == []


@pytest.mark.subprocess
def test_a_socket_directory_others_can_write_to_is_refused(long_data_dir: Path, shared_tmp: Path) -> None:
    squatted = shared_tmp / f"cm-{os.getuid()}"
    squatted.mkdir()
    squatted.chmod(0o777)

    result = status_command(long_data_dir, shared_tmp)

    assert result.returncode == 1
    assert f"{squatted}: it has mode 0777 (group or others have access; 0700 expected)" in result.stderr
    assert "TMPDIR" in result.stderr


def test_a_symbolic_link_in_place_of_the_socket_directory_is_refused(
    long_data_dir: Path, shared_tmp: Path, tmp_path: Path
) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    (shared_tmp / f"cm-{os.getuid()}").symlink_to(target)

    with pytest.raises(ConfigurationError, match="is a symbolic link"):
        _ = Settings(env_file=None).storage.socket_path


def test_a_runtime_directory_open_to_others_is_refused(
    long_data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir()
    runtime.chmod(0o755)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))

    with pytest.raises(ConfigurationError, match=r"has mode 0755.*set XDG_RUNTIME_DIR"):
        _ = Settings(env_file=None).storage.socket_path


@pytest.mark.subprocess
def test_a_private_directory_is_used_and_a_missing_one_is_made_private(
    long_data_dir: Path, shared_tmp: Path
) -> None:
    path = Settings(env_file=None).storage.socket_path

    assert path.parent == shared_tmp / f"cm-{os.getuid()}"
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert status_command(long_data_dir, shared_tmp).returncode == 0


@pytest.mark.subprocess
def test_a_socket_path_too_long_for_its_name_is_refused_in_one_line(
    long_data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = tmp_path / ("r" * 80)
    runtime.mkdir(mode=0o700)

    result = status_command(long_data_dir, tmp_path, XDG_RUNTIME_DIR=str(runtime))

    assert result.returncode == 1
    assert "is too long for a Unix socket" in result.stderr
    assert "Traceback" not in result.stderr


@as_root
@pytest.mark.skipif(not SYSTEM_PYTHON.exists(), reason="needs /usr/bin/python3 to run as another user")
@pytest.mark.subprocess
def test_a_socket_served_by_another_user_gets_nothing(shared_tmp: Path) -> None:
    """Whatever the directory: a client checks who serves the socket before sending a vector."""
    path = shared_tmp / "vectors.sock"  # outside pytest's private tree, open to everyone
    squatter = subprocess.Popen(
        [
            str(SYSTEM_PYTHON),
            "-c",
            "import socket, sys, time\n"
            "s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4)\n"
            "print('ready', flush=True)\n"
            "c, _ = s.accept(); c.settimeout(5)\n"
            "try:\n    print(len(c.recv(65536)), flush=True)\nexcept OSError:\n    print(0, flush=True)\n",
            str(path),
        ],
        user=NOBODY,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert squatter.stdout is not None and squatter.stdout.readline() == "ready\n"

        def locked() -> ArrayVectorStore:
            raise StoreLockedError("held by the real owner")

        with pytest.raises(StorageError, match=f"served by a process of another user \\(uid {NOBODY}"):
            store = SharedVectorStore(locked, path)
            store.upsert([VectorPoint("a", np.ones(4, dtype=np.float32), {"tags": ["secret"]})])
        assert squatter.stdout.readline() == "0\n"  # the connection closed without a byte sent
    finally:
        squatter.kill()
        squatter.wait(timeout=10)
        if squatter.stdout is not None:
            squatter.stdout.close()
