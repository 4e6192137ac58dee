"""psycopg's errors as StorageError: what to do, by kind, and never the password."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from psycopg import errors as pg

from cognitive_memory.errors import StorageError
from cognitive_memory.storage.postgres import PostgresMemoryStore
from cognitive_memory.storage.postgres.database import PostgresDatabase
from cognitive_memory.storage.postgres.errors import server_name, storage_error

_SECRET = "s3cr3t-Pa55"
_URL = f"postgresql://alice:{_SECRET}@db.example:6543/memories"


def test_the_server_is_named_by_user_host_port_and_database_without_the_password() -> None:
    assert server_name(_URL) == "postgresql://alice@db.example:6543/memories"
    assert _SECRET not in server_name(f"host=db.example password={_SECRET} dbname=memories")


@pytest.mark.parametrize(
    ("error", "code", "advice"),
    [
        (
            psycopg.OperationalError(f'password authentication failed for user "alice" {_SECRET}'),
            "database_auth",
            "password",
        ),
        (psycopg.OperationalError('database "memories" does not exist'), "database_missing", "createdb"),
        (psycopg.OperationalError("connection refused"), "database_unreachable", "server running"),
        (
            pg.InsufficientPrivilege(f"permission denied for schema public ({_URL})"),
            "database_rights",
            "grant",
        ),
        (pg.DiskFull("could not extend file"), "disk_full", "Free space"),
        (pg.DeadlockDetected("deadlock detected"), "database_locked", "Try again"),
        (pg.SerializationFailure("could not serialize access"), "database_locked", "Try again"),
        (pg.ReadOnlySqlTransaction("read-only transaction"), "read_only", "primary"),
    ],
)
def test_each_kind_of_failure_says_what_to_do_and_never_the_password(
    error: psycopg.Error, code: str, advice: str
) -> None:
    failure = storage_error(error, _URL, "a write")

    assert isinstance(failure, StorageError)
    assert failure.code == code
    assert advice in str(failure)
    assert _SECRET not in str(failure)
    assert "db.example:6543" in str(failure)


def test_a_server_that_cannot_be_reached_is_a_storage_error_without_the_password() -> None:
    url = f"postgresql://alice:{_SECRET}@/memories?host=/nonexistent/socket/dir&connect_timeout=1"

    with pytest.raises(StorageError) as raised:
        PostgresDatabase(url, Path("unused"))

    assert raised.value.code == "database_unreachable"
    assert _SECRET not in str(raised.value)
    assert "COGNITIVE_MEMORY_DATABASE_URL" in str(raised.value)


def test_a_store_names_its_server_without_the_password(postgres_url: str) -> None:
    with_password = psycopg.conninfo.make_conninfo(postgres_url, password=_SECRET)
    store = PostgresMemoryStore(with_password)  # the test server trusts: the password is not checked

    assert store.where.startswith("postgresql://postgres@") and _SECRET not in store.where
    store.close()
