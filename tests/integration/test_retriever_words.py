"""Recall with the words searched in the vector index (``RetrievalConfig.words_in_index``, the
default): one call to the index finds meaning and words, and nothing of FTS5 is read, under a
session filter too; FTS5 answers when the index fails and with the switch off."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from cognitive_memory.encoding import HashEncoder
from cognitive_memory.errors import StorageError
from cognitive_memory.index import EdgeVectorStore, VectorFilter, VectorStore
from cognitive_memory.retrieval import RetrievalConfig, Retriever
from cognitive_memory.retrieval.floor import RelevanceFloor
from cognitive_memory.retrieval.results import RetrievalResult
from cognitive_memory.storage import SQLiteMemoryStore
from cognitive_memory.system import CognitiveSystem


class CountingIndex:
    """The vector index, with the calls recall makes to it counted by name."""

    def __init__(self, inner: VectorStore) -> None:
        self.inner = inner
        self.calls: list[str] = []
        self.failing = False

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.inner, name)
        if name not in {"search", "search_with_words"}:
            return attribute

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            if self.failing:
                raise StorageError("the index is away")
            return attribute(*args, **kwargs)

        return counted


@pytest.fixture
def system(tmp_path: Path) -> Iterator[CognitiveSystem]:
    records = SQLiteMemoryStore(tmp_path / "memories.db")
    index: Any = CountingIndex(EdgeVectorStore(tmp_path / "edge"))
    config = RetrievalConfig()
    opened = CognitiveSystem(records, index, HashEncoder(), Retriever(records, index, config))
    yield opened
    opened.close()


def _stored(system: CognitiveSystem) -> dict[str, str]:
    texts = {
        "zeppelin": "The zeppelins drifted over the harbour at dusk",
        "kafka": "Consumer lag on the kafka cluster doubled after the deploy",
        "soup": "Dinner was a lentil soup with cumin",
    }
    return {name: system.store(text, session_id=name).memory.id for name, text in texts.items()}


def _first(result: RetrievalResult) -> str:
    """The best memory recalled, core or peripheral (a word alone may not reach the core)."""
    return [*result.core, *result.peripheral][0].memory.id


def test_a_word_of_one_memory_finds_it_through_the_index(system: CognitiveSystem) -> None:
    ids = _stored(system)

    result = system.retrieve("zeppelin", max_results=3, include_bridges=False)

    assert _first(result) == ids["zeppelin"]
    assert [*result.core, *result.peripheral][0].score.lexical == pytest.approx(1.0)


def test_a_recall_makes_one_call_to_the_vector_index(system: CognitiveSystem) -> None:
    _stored(system)
    index = system.vectors
    assert isinstance(index, CountingIndex)
    index.calls.clear()

    system.retrieve("kafka consumer lag", max_results=3, include_bridges=False)

    assert index.calls == ["search_with_words"]


def test_a_recall_reads_nothing_of_fts5(system: CognitiveSystem) -> None:
    """Neither the search, the query's corrections, the words' rarity nor the floor's word shares
    read the lexical index (its table, its term lists or a scratch FTS5 table)."""
    ids = _stored(system)
    statements: list[str] = []
    database = system.records.database
    database.trace(statements.append)
    try:
        misspelt = system.retrieve("zepplins over the harbour", max_results=3, include_bridges=False)
        spelt = system.retrieve("kafka consumer lag", max_results=3, include_bridges=False)
    finally:
        database.trace(None)

    assert _first(misspelt) == ids["zeppelin"] and _first(spelt) == ids["kafka"]
    # Read once a recall, before the search: the floor's word shares take the same counts.
    assert sum("document_frequencies" in statement for statement in statements) == 2
    assert [statement for statement in statements if "fts" in statement.lower()] == []


def test_recall_finds_words_in_fts5_while_the_index_fails(system: CognitiveSystem) -> None:
    ids = _stored(system)
    index = system.vectors
    assert isinstance(index, CountingIndex)
    index.failing = True

    result = system.retrieve("lentil soup", max_results=3)

    assert result.degraded
    assert _first(result) == ids["soup"]


def test_the_words_in_index_switch_off_searches_fts5_beside_the_index(system: CognitiveSystem) -> None:
    ids = _stored(system)
    system.retriever.config = replace(system.retriever.config, words_in_index=False)
    index = system.vectors
    assert isinstance(index, CountingIndex)
    index.calls.clear()

    result = system.retrieve("zeppelin", max_results=3, include_bridges=False)

    assert index.calls == ["search"]
    assert _first(result) == ids["zeppelin"]


def test_a_misspelt_word_finds_its_memory_through_the_index(system: CognitiveSystem) -> None:
    ids = _stored(system)
    # The hash encoder gives no meaning to vouch for a word found through its correction.
    system.retriever.config = replace(system.retriever.config, floor=RelevanceFloor(enabled=False))

    result = system.retrieve("zepplins", max_results=3, include_bridges=False)

    assert _first(result) == ids["zeppelin"]


def test_under_a_session_filter_the_index_searches_the_sessions_memories(system: CognitiveSystem) -> None:
    ids = _stored(system)
    index = system.vectors
    assert isinstance(index, CountingIndex)
    index.calls.clear()

    result = system.retrieve(
        "lentil soup", max_results=3, include_bridges=False, where=VectorFilter(sessions=("soup",))
    )

    assert index.calls == ["search_with_words"]
    assert [r.memory.id for r in (*result.core, *result.peripheral)] == [ids["soup"]]


def test_under_a_session_filter_the_other_sessions_matches_crowd_nothing_out(system: CognitiveSystem) -> None:
    # More memories of another session hold the query's words, in shorter texts (a better BM25)
    # than the pool of word matches takes: the session's own match must still be found. Its text
    # is long, so its cosine to the query (the hash encoder's: shared words) is under the
    # similarity the meaning needs: only its words can find it.
    system.store_many(
        [f"Lentil soup, take {n}" for n in range(system.retriever.pool_size(3) + 10)], session_id="other"
    )
    filler = " ".join(f"note{n}" for n in range(400))
    mine = system.store(f"Grandmother cooked a lentil soup. {filler}", session_id="mine").memory.id
    system.retriever.config = replace(system.retriever.config, floor=RelevanceFloor(enabled=False))

    result = system.retrieve(
        "lentil soup", max_results=3, include_bridges=False, where=VectorFilter(sessions=("mine",))
    )

    assert [r.memory.id for r in (*result.core, *result.peripheral)] == [mine]
