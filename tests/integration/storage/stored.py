"""Memories for the store of record's tests, and a look at its tables from outside."""

from __future__ import annotations

import sqlite3
import zlib
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from cognitive_memory.core.memory import CognitiveMemory, HierarchyLevel, MemoryType

STORED_AT = datetime(2024, 5, 1, 12, 30, 15, 123456, tzinfo=UTC)


def stored_memory(memory_id: str, **changes: Any) -> CognitiveMemory:
    """A memory with a unit vector drawn from its id, stored at STORED_AT."""
    vector = np.random.default_rng(zlib.crc32(memory_id.encode())).normal(size=384).astype(np.float32)
    fields: dict[str, Any] = {
        "id": memory_id,
        "content": f"memory {memory_id}",
        "hierarchy_level": HierarchyLevel.CONTEXT,
        "memory_type": MemoryType.SEMANTIC,
        "created_date": STORED_AT,
        "timestamp": STORED_AT,
        "cognitive_embedding": vector / np.linalg.norm(vector),
    }
    return CognitiveMemory(**(fields | changes))


def table_rows(db_path: Path, sql: str) -> list[Any]:
    """The rows of ``sql`` read through a connection of its own."""
    with closing(sqlite3.connect(db_path)) as conn:
        return conn.execute(sql).fetchall()
