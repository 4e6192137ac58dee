"""The token of the HTTP server and the dashboard, and `memory_system token`.

Without ``MCP_AUTH_TOKEN``, an HTTP server is still private to its user, as Jupyter's is: the first
HTTP start generates a token (256 random bits) into ``<data dir>/http-token``, created with mode
0600, and every later start reuses it, so a client configured with it keeps working. A file that
another user could have read or replaced (group or other bits, another owner, a symbolic link) is
refused, never used or repaired silently; so is anything but a regular file (a FIFO, a directory, a
device), without waiting on it: the file is opened by ``open_regular``, which cannot block.
``MCP_HTTP_AUTH=off`` serves loopback without a token, for a machine where every local user is
trusted.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import secrets
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from cognitive_memory.errors import ConfigurationError
    from cognitive_memory.regular_files import NotRegularFileError
    from cognitive_memory.settings import Settings

__all__ = [
    "TOKEN_FILE",
    "login_link",
    "login_notice",
    "new_token",
    "read_or_create",
    "register",
    "server_token",
    "token_path",
]

logger = logging.getLogger(__name__)

TOKEN_FILE = "http-token"
_MAX_TOKEN_CHARS = 512


def token_path(settings: Settings) -> Path:
    return settings.storage.data_dir.expanduser() / TOKEN_FILE


def server_token(settings: Settings) -> str | None:
    """The token every HTTP request must carry: ``MCP_AUTH_TOKEN``, else the generated one; None
    with ``MCP_HTTP_AUTH=off``. Raises ConfigurationError for a token file that is not private."""
    listen = settings.server
    if listen.auth_token is not None:
        return listen.auth_token.get_secret_value()
    if listen.http_auth == "off":
        return None
    _warn_if_open(settings.storage.data_dir.expanduser())
    path = token_path(settings)
    try:
        return read_or_create(path)
    except OSError as exc:
        from cognitive_memory.errors import ConfigurationError

        raise ConfigurationError(
            f"Cannot use the HTTP token file {path} ({exc.strerror or exc}): make the data directory "
            "usable, or set MCP_AUTH_TOKEN."
        ) from None


def _warn_if_open(data_dir: Path) -> None:
    """The token guards HTTP; a data directory other users may enter gives them the database."""
    with contextlib.suppress(OSError):
        mode = stat.S_IMODE(data_dir.stat().st_mode)
        if mode & 0o077 and sys.platform != "win32":
            logger.warning(
                "%s has mode %04o: other users can read the memory database in it directly, "
                "whatever the HTTP token. `chmod 700 %s` closes it (new data directories are made 0700).",
                data_dir,
                mode,
                data_dir,
            )


def login_link(host: str, port: int) -> tuple[str, str]:
    """A new one-time login code and the dashboard URL that spends it, for a server on ``host``."""
    code = secrets.token_urlsafe(32)
    name = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    name = f"[{name}]" if ":" in name and not name.startswith("[") else name
    return code, f"http://{name}:{port}/login?once={code}"


def login_notice(url: str) -> str:
    """What a server prints on stderr once: the login link, and where HTTP clients find the token."""
    return (
        f"Dashboard login link (works once, for 10 minutes): {url}\n"
        "HTTP MCP clients send `Authorization: Bearer <token>`; `memory_system token` prints the token."
    )


def read_or_create(path: Path) -> str:
    """The token in ``path``, made first if there is none (two processes starting at once agree)."""
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    token = secrets.token_urlsafe(32)
    temporary = _private_copy(path, token)
    try:
        os.link(temporary, path)  # fails if another process made it meanwhile: theirs counts
    except FileExistsError:
        return _read(path)
    finally:
        temporary.unlink()
    return token


def new_token(path: Path) -> str:
    """Replace the token in ``path`` with a new one (whatever file was there; not a directory)."""
    token = secrets.token_urlsafe(32)
    temporary = _private_copy(path, token)
    try:
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        what = "it is a directory" if exc.errno == errno.EISDIR else (exc.strerror or str(exc))
        raise _configuration(
            f"Cannot replace the HTTP token file {path}: {what}. Move it away or remove it and run "
            "`memory_system token --new` again, or set MCP_AUTH_TOKEN."
        ) from None
    return token


def _private_copy(path: Path, token: str) -> Path:
    """``token`` in a new file of mode 0600 beside ``path``, in a directory only its user may enter
    when made here."""
    from cognitive_memory.regular_files import write_beside

    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    return write_beside(path, token + "\n")


def _read(path: Path) -> str:
    """The token in ``path``: a regular file of the user's, mode 0600, not a symbolic link, opened
    so that a FIFO or a device put there cannot block (FileNotFoundError when there is none)."""
    from cognitive_memory.regular_files import NotRegularFileError, open_regular

    try:
        with open_regular(path, follow_symlinks=False, owned=True) as file:
            mode = stat.S_IMODE(os.fstat(file.fileno()).st_mode)
            if mode & 0o077 and sys.platform != "win32":
                raise _refused(path, f"has mode {mode:04o} (group or others may read it; 0600 expected)")
            token = file.read(_MAX_TOKEN_CHARS + 1).decode("ascii", errors="replace").strip()
    except NotRegularFileError as exc:
        raise _not_a_token_file(path, exc) from None
    if not token or len(token) > _MAX_TOKEN_CHARS or not token.isprintable() or " " in token:
        raise _refused(path, "holds no usable token")
    return token


_REPLACE = (
    "`memory_system token --new` replaces it with a new private one (HTTP clients then need the new "
    "token), or set MCP_AUTH_TOKEN."
)


def _not_a_token_file(path: Path, refused: NotRegularFileError) -> ConfigurationError:
    """What to do about a token path that holds no private file of the user's."""
    if refused.what == "a directory":
        remedy = "Move it away or remove it and run `memory_system token` again, or set MCP_AUTH_TOKEN."
    else:
        remedy = _REPLACE
    return _configuration(
        f"Refusing to use the HTTP token file {path}: it is {refused.what}, not a private file of yours "
        f"(another user may have put it there). {remedy}"
    )


def _refused(path: Path, problem: str) -> ConfigurationError:
    return _configuration(
        f"Refusing to use the HTTP token file {path}: it {problem}, so another user may know it. {_REPLACE}"
    )


def _configuration(message: str) -> ConfigurationError:
    from cognitive_memory.errors import ConfigurationError

    return ConfigurationError(message)


def register(app: typer.Typer, settings: Callable[[], Settings]) -> None:
    """Add ``token`` to ``app``."""

    @app.command("token")
    def token(
        new: Annotated[
            bool, typer.Option("--new", help="Replace the generated token (restart servers after).")
        ] = False,
    ) -> None:
        """Print the token HTTP clients send (`Authorization: Bearer <token>`) and the dashboard's
        login asks for: MCP_AUTH_TOKEN, else the one generated in the data directory."""
        from cognitive_memory.errors import ConfigurationError

        resolved = settings()
        listen = resolved.server
        if listen.auth_token is not None and new:
            raise _fail("The token is MCP_AUTH_TOKEN (environment or .env): change it there.")
        if listen.auth_token is None and listen.http_auth == "off":
            raise _fail("HTTP needs no token here (MCP_HTTP_AUTH=off): every local user is trusted.")
        try:
            value = new_token(token_path(resolved)) if new else server_token(resolved)
        except (ConfigurationError, OSError) as exc:
            raise _fail(exc.message if isinstance(exc, ConfigurationError) else str(exc)) from None
        typer.echo(value)
        if new:
            typer.echo("A new token: restart running servers and give it to your HTTP clients.", err=True)


def _fail(message: str) -> typer.Exit:
    typer.echo(f"Error: {message}", err=True)
    return typer.Exit(code=1)
