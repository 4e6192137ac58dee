"""What the store records about itself: ``store_meta`` (the encoder signature, the last
consolidation, secrets) and the times memories were last stored and retrieved."""

from __future__ import annotations

from datetime import UTC, datetime

from cognitive_memory.storage.sql import Connection, DatabaseAccess

__all__ = ["StoreProperties", "keep", "note_activity"]


def keep(conn: Connection, key: str, value: str) -> None:
    """Keep ``value`` under ``key`` in ``store_meta``, replacing what was there (in the caller's
    transaction)."""
    conn.execute(
        "INSERT INTO store_meta (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def note_activity(conn: Connection, name: str, at: float) -> None:
    """Record that ``name`` (``last_storage``, ``last_retrieval``) happened at ``at`` (in the
    caller's transaction)."""
    conn.execute(
        "INSERT INTO activity (name, at) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET at = excluded.at",
        (name, at),
    )


class StoreProperties:
    """The ``store_meta`` and ``activity`` rows of one database."""

    def __init__(self, database: DatabaseAccess) -> None:
        self._db = database
        self._vector_size: int | None = None

    def get(self, key: str) -> str | None:
        """The value kept under ``key``, if any."""
        rows = self._db.rows("SELECT value FROM store_meta WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    def set(self, key: str, value: str) -> None:
        """Keep ``value`` under ``key`` (replacing what was there), in one transaction."""
        with self._db.transaction() as conn:
            keep(conn, key, value)

    def dimension(self) -> int | None:
        """The size of the vectors of the encoder the store records (``name:dimension``), if any."""
        if self._vector_size is None:
            recorded = self.get("encoder") or ""
            size = recorded.rpartition(":")[2]
            self._vector_size = int(size) if size.isdigit() else None
        return self._vector_size

    def activity(self) -> dict[str, datetime]:
        """When memories were last stored and retrieved."""
        rows = self._db.rows("SELECT name, at FROM activity")
        return {name: datetime.fromtimestamp(at, UTC) for name, at in rows}
