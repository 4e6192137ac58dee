"""The store of record on a PostgreSQL server (psycopg 3 with a pool): the same repositories as
SQLite's (``storage/*.py``) over ``PostgresDatabase``, its own migrations numbered with SQLite's."""

from cognitive_memory.storage.postgres.database import PostgresDatabase
from cognitive_memory.storage.postgres.store import PostgresMemoryStore

__all__ = ["PostgresDatabase", "PostgresMemoryStore"]
