"""What the store records about itself: ``store_meta`` (the encoder signature, the last
consolidation, secrets) and the times memories were last stored and retrieved."""

from __future__ import annotations

from datetime import UTC, datetime

from cognitive_memory.storage.sql import DatabaseAccess

__all__ = ["StoreProperties"]


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
            conn.execute("INSERT OR REPLACE INTO store_meta (key, value) VALUES (?, ?)", (key, value))

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
