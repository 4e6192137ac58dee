"""`memory_system token` and the generated token file (``memory_system.http_token``)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cognitive_memory.errors import ConfigurationError
from memory_system.cli import app
from memory_system.http_token import read_or_create
from tests.blocking import ends_within
from tests.hooking import fifo

runner = CliRunner()


@pytest.fixture(autouse=True)
def no_auth_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCP_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("MCP_HTTP_AUTH", raising=False)


def test_token_generates_a_private_token_once_and_prints_it(data_dir: Path) -> None:
    first = runner.invoke(app, ["token"])
    assert first.exit_code == 0, first.output
    token = first.stdout.strip()
    assert len(token) >= 40
    path = data_dir / "http-token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text().strip() == token
    assert runner.invoke(app, ["token"]).stdout.strip() == token  # reused, not regenerated


def test_token_new_replaces_it(data_dir: Path) -> None:
    old = runner.invoke(app, ["token"]).stdout.strip()
    replaced = runner.invoke(app, ["token", "--new"])
    assert replaced.exit_code == 0
    assert replaced.stdout.strip() != old
    assert (data_dir / "http-token").read_text().strip() == replaced.stdout.strip()
    assert stat.S_IMODE((data_dir / "http-token").stat().st_mode) == 0o600
    assert "restart" in replaced.stderr


def test_token_prints_mcp_auth_token_when_it_is_set_and_never_replaces_it(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_AUTH_TOKEN", "chosen-by-me")
    assert runner.invoke(app, ["token"]).stdout.strip() == "chosen-by-me"
    refused = runner.invoke(app, ["token", "--new"])
    assert refused.exit_code == 1
    assert "MCP_AUTH_TOKEN" in refused.stderr
    assert not (data_dir / "http-token").exists()


def test_token_with_http_auth_off_says_there_is_none(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_HTTP_AUTH", "off")
    result = runner.invoke(app, ["token"])
    assert result.exit_code == 1
    assert "MCP_HTTP_AUTH=off" in result.stderr
    assert not (data_dir / "http-token").exists()


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_a_token_file_others_may_read_is_refused_not_used(data_dir: Path, mode: int) -> None:
    path = data_dir / "http-token"
    token = read_or_create(path)
    path.chmod(mode)
    result = runner.invoke(app, ["token"])
    assert result.exit_code == 1
    assert f"has mode {mode:04o}" in result.stderr
    assert "memory_system token --new" in result.stderr
    assert token not in result.output
    assert runner.invoke(app, ["token", "--new"]).exit_code == 0  # the way out it names works
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_symbolic_link_or_an_empty_file_is_refused(data_dir: Path, tmp_path: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    elsewhere = tmp_path / "planted"
    elsewhere.write_text("attacker-chosen-token\n")
    elsewhere.chmod(0o600)
    (data_dir / "http-token").symlink_to(elsewhere)
    with pytest.raises(ConfigurationError, match="symbolic link"):
        read_or_create(data_dir / "http-token")
    (data_dir / "http-token").unlink()
    (data_dir / "http-token").write_text("\n")
    (data_dir / "http-token").chmod(0o600)
    with pytest.raises(ConfigurationError, match="no usable token"):
        read_or_create(data_dir / "http-token")


def error_line(args: list[str], path: Path) -> str:
    """The one line ``memory_system *args`` prints on stderr, ending within 2 s with status 1."""
    result = ends_within(2, lambda: runner.invoke(app, args), [path])
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith(f"Error: Refusing to use the HTTP token file {path}: it is ")
    return line


def test_a_fifo_at_the_token_path_is_refused_at_once_and_replaced_by_token_new(data_dir: Path) -> None:
    """Issue 43: another user's `mkfifo <data dir>/http-token` hung `token` in opening it."""
    data_dir.mkdir()
    with fifo(data_dir / "http-token") as path:
        line = error_line(["token"], path)
    assert "it is a FIFO (named pipe), not a private file of yours" in line
    assert "`memory_system token --new` replaces it" in line
    assert runner.invoke(app, ["token", "--new"]).exit_code == 0  # the way out it names works
    assert path.is_file()


@pytest.mark.subprocess
@pytest.mark.parametrize("command", [["serve", "mcp", "--port", "9"], ["ui", "--port", "9"]])
def test_an_http_server_with_a_fifo_at_the_token_path_ends_with_one_error_line(
    data_dir: Path, command: list[str]
) -> None:
    """It never listens; before, it hung in opening the FIFO (killed here after 60 s)."""
    data_dir.mkdir(mode=0o700)  # no warning that others may enter it beside the error
    with fifo(data_dir / "http-token") as path:
        result = subprocess.run(
            [sys.executable, "-m", "memory_system", *command], capture_output=True, text=True, timeout=60
        )
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert line.startswith(f"Error: Refusing to use the HTTP token file {path}: it is a FIFO (named pipe)")


def test_a_directory_at_the_token_path_is_refused_with_what_to_do(data_dir: Path) -> None:
    (data_dir / "http-token").mkdir(parents=True)
    line = error_line(["token"], data_dir / "http-token")
    assert "it is a directory" in line
    assert "Move it away or remove it and run `memory_system token` again, or set MCP_AUTH_TOKEN." in line
    assert "may know it" not in line
    replaced = runner.invoke(app, ["token", "--new"])
    assert replaced.exit_code == 1
    assert replaced.stderr == (
        f"Error: Cannot replace the HTTP token file {data_dir / 'http-token'}: it is a directory. Move it "
        "away or remove it and run `memory_system token --new` again, or set MCP_AUTH_TOKEN.\n"
    )
    assert sorted(p.name for p in data_dir.iterdir()) == ["http-token"]  # no temporary left


def test_a_token_file_of_another_user_is_refused(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = data_dir / "http-token"
    token = read_or_create(path)
    mine = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: mine + 1)
    line = error_line(["token"], path)
    assert f"it is another user's file (owner uid {mine}; you are uid {mine + 1})" in line
    assert token not in line


def test_a_token_file_another_server_made_is_used_as_it_is(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    fd = os.open(data_dir / "http-token", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, b"made-by-the-other-server\n")
    os.close(fd)
    assert read_or_create(data_dir / "http-token") == "made-by-the-other-server"
    assert sorted(p.name for p in data_dir.iterdir()) == ["http-token"]  # no temporary left


def test_a_data_directory_open_to_others_is_reported_when_http_starts(
    data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from cognitive_memory.settings import Settings
    from memory_system.http_token import server_token

    data_dir.mkdir(mode=0o755)
    data_dir.chmod(0o755)
    server_token(Settings(env_file=None))
    assert f"chmod 700 {data_dir}" in caplog.text
    caplog.clear()
    data_dir.chmod(0o700)
    server_token(Settings(env_file=None))
    assert "chmod" not in caplog.text


@pytest.mark.subprocess
def test_a_data_directory_that_cannot_hold_the_token_is_one_error_line(data_dir: Path) -> None:
    data_dir.mkdir(mode=0o700)
    blocked = data_dir / "blocked"
    blocked.write_text("a file where the data directory should be")
    result = subprocess.run(
        [sys.executable, "-m", "memory_system", "token"],
        env={**os.environ, "COGNITIVE_MEMORY_DATA_DIR": str(blocked / "data")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.startswith("Error: Cannot use the HTTP token file")
    assert "Traceback" not in result.stderr
