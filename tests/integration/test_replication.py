"""The outbox replay and the index rebuild meet rows the index cannot take (issue #27)."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from cognitive_memory.encoding import HashEncoder
from cognitive_memory.index import EdgeVectorStore, VectorStore
from cognitive_memory.index.qdrant_store import QdrantServerVectorStore
from cognitive_memory.retrieval import RetrievalConfig, Retriever
from cognitive_memory.storage import SQLiteMemoryStore
from cognitive_memory.system import CognitiveSystem
from tests.damaging import DAMAGES, write_bad_row, write_row

Opener = Callable[[], CognitiveSystem]

# The damages that leave the row readable: the index refuses its point (the others cannot be read).
REFUSED_BY_THE_INDEX = ("id not a UUID", "id a UUID in capitals", "embedding of 383 numbers")


@pytest.fixture(params=["edge", "qdrant-client"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens a system over the same database and index, as each new process does, once the
    previous one has closed."""
    opened: list[CognitiveSystem] = []

    def vectors() -> VectorStore:
        if request.param == "edge":
            return EdgeVectorStore(tmp_path / "edge")
        return QdrantServerVectorStore(QdrantClient(path=str(tmp_path / "qc")), "memories", "local")

    def open_system() -> CognitiveSystem:
        if opened:
            opened.pop().close()
        memories, index = SQLiteMemoryStore(tmp_path / "memories.db"), vectors()
        retriever = Retriever(memories, index, RetrievalConfig())
        system = CognitiveSystem(memories, index, HashEncoder(), retriever)
        opened.append(system)
        return system

    yield open_system
    if opened:
        opened.pop().close()


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_bad_row_fails_its_own_vector_write_and_never_the_batch_or_the_start(
    opener: Opener, damage: str
) -> None:
    first = opener()
    stored = [first.store(f"note {n} about the deploy pipeline").memory for n in range(2)]
    bad_id = write_bad_row(first.records.path, stored[0], damage)
    text = "a queued note about kafka lag"
    vector = HashEncoder().encode([text])[0]
    queued = dataclasses.replace(stored[1], id=str(uuid.uuid4()), content=text, cognitive_embedding=vector)
    write_row(first.records.path, queued)

    system = opener()  # its start replays the outbox: the bad row and the good one queued with it

    good = sorted([*(m.id for m in stored), queued.id])
    assert sorted(system.vectors.ids()) == good
    system.flush()
    assert system.records.outbox.pending() == [(bad_id, "upsert")]
    assert system.rebuild_index() == 3
    assert sorted(system.vectors.ids()) == good
    # A write the index refused stays queued; an unreadable row is named by doctor (test_doctor_rows).
    refused = [(bad_id, "upsert")] if damage in REFUSED_BY_THE_INDEX else []
    assert system.records.outbox.pending() == refused
    assert system.retrieve("kafka lag").core[0].memory.id == queued.id
    system.retrieve("the flaky build server, written by hand")  # the bad row's own words: no crash
    assert system.store("a new note after the bad row").queued is False
