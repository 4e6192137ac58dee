"""Recall under a session filter, on both index backends (Qdrant Edge; qdrant-client in local mode,
as for a Qdrant server): the session is a field of each point's payload, so the index searches all
of a session's memories, however many; an index made before (points without it) is given the ids
of the session's latest ``SESSION_SCAN`` memories, as SQLite lists them, until it is copied again
from SQLite, which writes the sessions and marks the index."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from qdrant_client import QdrantClient

import cognitive_memory.replicas.index_points as index_points
from cognitive_memory.core.memory import CognitiveMemory, HierarchyLevel, MemoryType
from cognitive_memory.core.records import new_memory
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.index import EdgeVectorStore, VectorFilter, VectorStore, edge_store, payload_for
from cognitive_memory.index import qdrant_store as qdrant_module
from cognitive_memory.index.qdrant_store import QdrantServerVectorStore
from cognitive_memory.retrieval import RetrievalConfig, Retriever
from cognitive_memory.storage import SQLiteMemoryStore
from cognitive_memory.storage.associations import TEMPORAL_WINDOW_SECONDS
from cognitive_memory.storage.memories import SESSION_SCAN
from cognitive_memory.system import CognitiveSystem

BACKENDS = ["edge", "qdrant-client"]
STARTED = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


class WatchedIndex:
    """The vector index, with the filter of each search recall makes kept."""

    def __init__(self, inner: VectorStore) -> None:
        self.inner = inner
        self.filters: list[VectorFilter | None] = []

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.inner, name)
        if name not in {"search", "search_with_words"}:
            return attribute

        place = 3 if name == "search_with_words" else 2  # where ``where`` comes among the arguments

        def watched(*args: Any, **kwargs: Any) -> Any:
            self.filters.append(kwargs["where"] if "where" in kwargs else args[place])
            return attribute(*args, **kwargs)

        return watched


class Clock:
    def __init__(self) -> None:
        self.now = STARTED

    def __call__(self) -> datetime:
        return self.now


def _index(kind: str, tmp_path: Path) -> VectorStore:
    if kind == "edge":
        return EdgeVectorStore(tmp_path / "edge")
    return QdrantServerVectorStore(QdrantClient(path=str(tmp_path / "qc")), "memories", "local")


@contextmanager
def _system(kind: str, tmp_path: Path, clock: Clock | None = None) -> Iterator[CognitiveSystem]:
    records = SQLiteMemoryStore(tmp_path / "memories.db")
    index: Any = WatchedIndex(_index(kind, tmp_path))
    system = CognitiveSystem(
        records, index, HashEncoder(), Retriever(records, index, RetrievalConfig()), clock=clock or Clock()
    )
    try:
        yield system
    finally:
        system.close()


def _without_session(memory: CognitiveMemory) -> dict[str, Any]:
    return {name: value for name, value in payload_for(memory).items() if name != "session_id"}


def _as_before_sessions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Index as the releases before the session was in the payload did: points without it, no
    payload index on it, no mark on the collection."""
    older_fields = {name: kind for name, kind in edge_store.INDEXED_FIELDS.items() if name != "session_id"}
    monkeypatch.setattr(index_points, "payload_for", _without_session)
    monkeypatch.setattr(edge_store, "INDEXED_FIELDS", older_fields)
    monkeypatch.setattr(qdrant_module, "INDEXED_FIELDS", older_fields)
    monkeypatch.setattr(QdrantServerVectorStore, "_mark_sessions", lambda self: None)


def _recalled(system: CognitiveSystem, query: str, session: str) -> list[str]:
    found = system.retrieve(
        query, max_results=5, include_bridges=False, where=VectorFilter(sessions=(session,))
    )
    return [ranked.memory.id for ranked in [*found.core, *found.peripheral]]


def _last_filter(system: CognitiveSystem) -> VectorFilter | None:
    index = system.vectors
    assert isinstance(index, WatchedIndex)
    return index.filters[-1]


def _stored_apart(system: CognitiveSystem, texts: list[str], session: str, first: datetime) -> list[str]:
    """Store ``texts`` in ``session`` in bulk (one transaction, the index written from the outbox),
    each further from the last than a link in time reaches, so none links to another."""
    apart = timedelta(seconds=TEMPORAL_WINDOW_SECONDS + 60)
    vectors = system.encoder.encode(texts)
    memories = [
        new_memory(
            text,
            vector,
            HierarchyLevel.EPISODE,
            MemoryType.EPISODIC,
            first + n * apart,
            0.5,
            (),
            {},
            None,
            session,
        )
        for n, (text, vector) in enumerate(zip(texts, vectors, strict=True))
    ]
    system.records.memories.add(memories)
    system.replay_outbox()
    return [memory.id for memory in memories]


@pytest.mark.slow  # 13-20 s on a busy 2-core machine: storing 5,001 memories
@pytest.mark.parametrize("kind", BACKENDS)
def test_a_session_filter_finds_the_oldest_of_more_memories_than_the_ids_it_once_took(
    kind: str, tmp_path: Path
) -> None:
    with _system(kind, tmp_path) as system:
        routine = [
            f"Routine entry {n}: valve {n % 37} checked, pump {n % 101} greased" for n in range(SESSION_SCAN)
        ]
        oldest, *_ = _stored_apart(
            system, ["The lighthouse keeper logged a violet comet", *routine], "long", STARTED
        )
        system.store("A violet comet, seen from another lighthouse", session_id="elsewhere")
        assert system.vectors.has_sessions()

        found = _recalled(system, "violet comet lighthouse keeper", "long")

        assert found[:1] == [oldest]
        assert _last_filter(system) == VectorFilter(sessions=("long",))  # no ids: the session itself


@pytest.mark.parametrize("kind", BACKENDS)
def test_an_index_made_before_sessions_answers_by_ids_until_a_copy_from_sqlite_fills_them(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as before:
        _as_before_sessions(before)
        with _system(kind, tmp_path) as older:
            mine = older.store("Dinner was a lentil soup with cumin", session_id="mine").memory.id
            older.store("Lunch was a lentil soup with lemon", session_id="other")
            assert not older.vectors.has_sessions()

    with _system(kind, tmp_path) as system:
        assert not system.vectors.has_sessions()
        later = system.store("Supper was a lentil soup with rice", session_id="mine").memory.id

        assert set(_recalled(system, "lentil soup", "mine")) == {mine, later}
        assert _last_filter(system) == VectorFilter(ids=(later, mine))  # the session's, from SQLite

        system.rebuild_index()  # doctor --repair

        assert system.vectors.has_sessions()
        assert set(_recalled(system, "lentil soup", "mine")) == {mine, later}
        assert _last_filter(system) == VectorFilter(sessions=("mine",))
    with _system(kind, tmp_path) as reopened:
        assert reopened.vectors.has_sessions(), "the mark is kept with the index"
        memory = reopened.records.memories.get([mine])[0]
        assert memory.cognitive_embedding is not None
        hits = reopened.vectors.search(memory.cognitive_embedding, 5, VectorFilter(sessions=("other",)))
        assert [hit.id for hit in hits] != [] and mine not in {hit.id for hit in hits}
