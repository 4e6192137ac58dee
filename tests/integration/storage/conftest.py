"""Fixtures of the store of record's tests: a database path and a store in ``tmp_path``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cognitive_memory.storage import SQLiteMemoryStore


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "db" / "memories.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[SQLiteMemoryStore]:
    opened = SQLiteMemoryStore(db_path)
    yield opened
    opened.close()
