"""What the doctor reads of a PostgreSQL store of record before anything opens it: whether the
server answers, its version, the migrations the database records, and the rights a server needs
(to make its tables on a new database, to read and write them on one made)."""

from __future__ import annotations

from typing import NamedTuple

import psycopg

from cognitive_memory.storage.postgres.errors import storage_error

__all__ = ["ServerHealth", "inspect_server"]

_CONNECT_SECONDS = 10


class ServerHealth(NamedTuple):
    """The server's version, the migrations recorded (empty: a new database), and the rights
    lacking (empty: none)."""

    version: str
    migrations: set[str]
    lacking: list[str]


def inspect_server(url: str) -> ServerHealth:
    """Read the database at ``url`` without writing; ``StorageError`` (its message without the
    password) when it cannot be reached or read."""
    try:
        with psycopg.connect(url, connect_timeout=_CONNECT_SECONDS, autocommit=True) as conn:
            version = str(conn.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]
            made = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()
            if not (made and made[0]):
                create = conn.execute("SELECT has_schema_privilege(current_schema(), 'CREATE')").fetchone()
                lacking = [] if create and create[0] else ["CREATE on the schema (to make the tables)"]
                return ServerHealth(version, set(), lacking)
            recorded = {str(row[0]) for row in conn.execute("SELECT name FROM schema_migrations")}
            rights = conn.execute(
                "SELECT has_table_privilege('memories', 'SELECT, INSERT, UPDATE, DELETE'), "
                "has_table_privilege('change_log', 'SELECT, INSERT, DELETE')"
            ).fetchone()
            lacking = [] if rights and all(rights) else ["reading and writing its tables"]
            return ServerHealth(version, recorded, lacking)
    except psycopg.Error as exc:
        raise storage_error(exc, url, "reading the memory database") from exc
