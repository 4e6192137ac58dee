"""psycopg's errors as ``StorageError``: what went wrong and what to do, never the password.

The server is named by ``server_name`` (user, host, port and database of the URL, nothing else),
and every text taken from psycopg is scrubbed of the password before it is shown.
"""

from __future__ import annotations

import psycopg
from psycopg import errors as pg
from psycopg.conninfo import conninfo_to_dict

from cognitive_memory.errors import StorageError

__all__ = ["server_name", "storage_error"]

_HIDDEN = "********"


def server_name(url: str) -> str:
    """``user@host:port/database`` of a connection URL (what is given of it); never the password."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "the PostgreSQL server (its URL does not parse)"
    user = f"{parts['user']}@" if parts.get("user") else ""
    host = str(parts.get("host") or "localhost")
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{host}{port}/{parts.get('dbname') or ''}"


def _password(url: str) -> str | None:
    try:
        password = conninfo_to_dict(url).get("password")
        return str(password) if password else None
    except psycopg.ProgrammingError:
        return None


def scrubbed(text: str, url: str) -> str:
    """``text`` with the URL's password (and the URL itself) replaced."""
    if password := _password(url):
        text = text.replace(password, _HIDDEN)
    return text.replace(url, server_name(url))


def _connect_advice(exc: psycopg.Error, where: str) -> tuple[str, str]:
    """(code, message) for a connection that could not be made or kept."""
    text = str(exc)
    if isinstance(exc, pg.InvalidPassword) or "password authentication failed" in text:
        return "database_auth", (
            f"{where} refused the user name or password: check the user and password in "
            "COGNITIVE_MEMORY_DATABASE_URL (or ~/.pgpass)."
        )
    if isinstance(exc, pg.InvalidCatalogName) or ("database" in text and "does not exist" in text):
        return "database_missing", (
            f"{where}: the database does not exist. Create it (createdb, or CREATE DATABASE) or point "
            "COGNITIVE_MEMORY_DATABASE_URL at an existing one."
        )
    if isinstance(exc, pg.InvalidAuthorizationSpecification) or "no pg_hba.conf entry" in text:
        return "database_auth", (
            f"{where} does not let this user in from here: allow it in the server's pg_hba.conf, or "
            "use another user in COGNITIVE_MEMORY_DATABASE_URL."
        )
    return "database_unreachable", (
        f"Cannot reach {where}: is the server running and the host and port in "
        "COGNITIVE_MEMORY_DATABASE_URL right?"
    )


def storage_error(exc: psycopg.Error, url: str, doing: str) -> StorageError:
    """The ``StorageError`` for ``exc``, raised while ``doing`` (e.g. "a write") on ``url``."""
    where = server_name(url)
    detail = scrubbed(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__, url)
    code, message = _classified(exc, where, doing)
    return StorageError(f"{message} ({detail})", code=code)


def _classified(exc: psycopg.Error, where: str, doing: str) -> tuple[str, str]:
    if isinstance(exc, pg.DiskFull):
        return "disk_full", f"The disk of {where} is full: {doing} failed, nothing was written. Free space."
    if isinstance(exc, pg.InsufficientPrivilege):
        return "database_rights", (
            f"The user of {where} lacks a right {doing} needs: grant it CONNECT, CREATE and the use of "
            "the schema's tables (or use the owner of the database)."
        )
    if isinstance(exc, pg.ReadOnlySqlTransaction):
        return "read_only", (
            f"{where} is read-only (a standby?): {doing} failed, nothing was written. Point "
            "COGNITIVE_MEMORY_DATABASE_URL at the primary."
        )
    if isinstance(exc, (pg.SerializationFailure, pg.DeadlockDetected, pg.LockNotAvailable)):
        return "database_locked", (
            f"{where} stopped {doing} that met another one (a deadlock or a serialization conflict): "
            "nothing was written. Try again."
        )
    if isinstance(exc, (pg.QueryCanceled, pg.AdminShutdown, pg.CannotConnectNow)):
        return "database_unreachable", f"{where} ended {doing} (shutting down or canceled): try again."
    refused_in = (pg.InvalidPassword, pg.InvalidCatalogName, pg.InvalidAuthorizationSpecification)
    if isinstance(exc, refused_in) or (isinstance(exc, psycopg.OperationalError) and exc.sqlstate is None):
        return _connect_advice(exc, where)
    return "storage_error", f"{where} failed {doing}."
