"""``open_regular``: only a regular file is opened, and opening never blocks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cognitive_memory.regular_files import NotRegularFileError, open_regular, read_regular
from tests.blocking import ends_within
from tests.hooking import fifo


def refusal(path: Path, **options: bool) -> NotRegularFileError:
    """The refusal of ``read_regular(path)``, which must come within 5 s."""
    with pytest.raises(NotRegularFileError) as refused:
        ends_within(5, lambda: read_regular(path, **options), [path])
    return refused.value


def test_a_regular_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"text\n")
    assert read_regular(tmp_path / "f") == b"text\n"
    assert read_regular(tmp_path / "f", limit=2) == b"te"
    with open_regular(tmp_path / "f") as file:
        assert os.get_blocking(file.fileno())  # reads of the file opened block as usual


def test_a_fifo_is_refused_at_once_and_named(tmp_path: Path) -> None:
    with fifo(tmp_path / "pipe") as path:
        refused = refusal(path)
    assert str(refused) == f"{path} is a FIFO (named pipe)"
    assert not refused.replaced


def test_a_directory_and_a_device_are_refused(tmp_path: Path) -> None:
    assert refusal(tmp_path).what == "a directory"
    assert refusal(Path(os.devnull)).what == "a device"


def test_a_symbolic_link_is_followed_unless_asked_not_to(tmp_path: Path) -> None:
    (tmp_path / "target").write_bytes(b"x")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    assert read_regular(tmp_path / "link") == b"x"
    assert refusal(tmp_path / "link", follow_symlinks=False).what == "a symbolic link"


def test_a_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "absent")


def test_another_users_file_is_refused_when_it_must_be_ours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "f").write_bytes(b"x")
    mine = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: mine + 1)
    assert read_regular(tmp_path / "f") == b"x"
    refused = refusal(tmp_path / "f", owned=True)
    assert refused.what == f"another user's file (owner uid {mine}; you are uid {mine + 1})"


@pytest.mark.parametrize("swapped_in", ["fifo", "file", "symlink"])
def test_a_file_swapped_in_between_the_look_and_the_open_is_refused_without_blocking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swapped_in: str
) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"looked at")
    (tmp_path / "other").write_bytes(b"swapped in")
    real_open = os.open

    def swap_then_open(name: str, flags: int, *args: int) -> int:
        path.unlink()
        if swapped_in == "fifo":
            os.mkfifo(path)
        elif swapped_in == "file":
            path.write_bytes(b"swapped in")
        else:
            path.symlink_to(tmp_path / "other")
        return real_open(name, flags, *args)

    monkeypatch.setattr(os, "open", swap_then_open)
    refused = refusal(path, follow_symlinks=False)
    assert refused.replaced
