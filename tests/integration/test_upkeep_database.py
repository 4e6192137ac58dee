"""The health of the store of record: the SQLite check reads a damaged file and a healthy one."""

from __future__ import annotations

from pathlib import Path

from cognitive_memory.storage.migrations import MIGRATIONS
from cognitive_memory.system import CognitiveSystem
from cognitive_memory.upkeep import check_sqlite


def test_a_file_that_is_not_a_database_fails_the_sqlite_check(data_dir: Path) -> None:
    data_dir.mkdir()
    (data_dir / "cognitive_memory.db").write_bytes(b"this is not a SQLite file" * 100)

    result = check_sqlite(data_dir / "cognitive_memory.db")

    assert result.status == "fail"
    assert "is damaged (file is not a database)" in result.detail
    assert ".recover" in result.detail


def test_the_sqlite_check_reads_integrity_wal_and_migrations(hash_system: CognitiveSystem) -> None:
    result = check_sqlite(hash_system.records.path)

    assert (result.status, result.detail) == ("ok", f"integrity ok, WAL, {len(MIGRATIONS)} migrations")
