"""What a recall reads (service/recall.py down to the stores): one call to the vector index and two
reads of the store of record (SQLite or PostgreSQL), one before the search and one after it
(docs/recall.md#how-recall-works); bridges add one call, and are read in the read after the
search. With its state in memory, as a server keeps it (``replicas``), the search comes first and
the store is read once, after it. With a Qdrant server (qdrant-client's local mode stands in) the
search is one call to the server and the store only answers point reads. A new read or call fails
here."""

from __future__ import annotations

import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from qdrant_client import QdrantClient

from cognitive_memory.core.store import StoreOfRecord
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.errors import StorageError
from cognitive_memory.index import EdgeVectorStore, VectorStore
from cognitive_memory.index.coverage import IndexCoverage
from cognitive_memory.index.qdrant_store import QdrantServerVectorStore
from cognitive_memory.main import open_store
from cognitive_memory.replicas import FollowedLinks, FollowedRanking, FollowedWords
from cognitive_memory.retrieval import RetrievalConfig, Retriever
from cognitive_memory.service.filters import RecallFilters
from cognitive_memory.service.recall import Detail, RecallResult, recall
from cognitive_memory.system import CognitiveSystem

pytestmark = pytest.mark.stores  # each test on SQLite and on PostgreSQL

DIMENSION = 384


class CountingIndex:
    """The vector index, with every call made to it counted by name while ``counting``."""

    def __init__(self, inner: VectorStore) -> None:
        self.inner = inner
        self.calls: list[str] = []
        self.counting = False
        self.failing = False

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.inner, name)
        if not callable(attribute):
            return attribute

        def counted(*args: Any, **kwargs: Any) -> Any:
            if self.counting and threading.current_thread() is threading.main_thread():
                self.calls.append(name)
                if self.failing:
                    raise StorageError("the index is away")
            return attribute(*args, **kwargs)

        return counted


@dataclass
class Transactions:
    """The transactions the store runs for the calling thread, from the statements it traces: a
    read is a BEGIN ... COMMIT (or ROLLBACK), or a statement run on its own outside one (its own
    transaction); a write begins with SQLite's BEGIN IMMEDIATE or PostgreSQL's write lock."""

    reads: int = 0
    writes: int = 0
    statements: list[str] = field(default_factory=list)
    _open: bool = False

    def trace(self, statement: str) -> None:
        if statement.startswith("--") or threading.current_thread() is not threading.main_thread():
            return  # a virtual table's own statement, or the bookkeeping of uses after the answer
        self.statements.append(statement)
        if statement.startswith("BEGIN"):
            self._open = True
            if statement.startswith("BEGIN IMMEDIATE") or "pg_advisory_xact_lock" in statement:
                self.writes += 1
            else:
                self.reads += 1
        elif statement.split(None, 1)[0] in ("COMMIT", "ROLLBACK"):
            self._open = False
        elif not self._open:
            self.reads += 1


@pytest.fixture
def open_records(store_of_record: str, tmp_path: Path) -> Callable[[], StoreOfRecord]:
    """Open the test's store of record: each call one more connection to the same store (the
    database COGNITIVE_MEMORY_DATABASE_URL names on PostgreSQL)."""
    location = os.environ.get("COGNITIVE_MEMORY_DATABASE_URL") or str(tmp_path / "memories.db")
    return lambda: open_store(location, tmp_path)


@pytest.fixture
def server(
    open_records: Callable[[], StoreOfRecord], tmp_path: Path
) -> Iterator[tuple[CognitiveSystem, CountingIndex]]:
    """A system whose index is a Qdrant server, with the calls reaching the client counted too."""
    records = open_records()
    local: Any = QdrantClient(path=str(tmp_path / "qc"))
    client = CountingIndex(local)
    counted: Any = client
    index: Any = CountingIndex(QdrantServerVectorStore(counted, "memories", "local"))
    opened = _system(records, index)
    yield opened, client
    opened.close()


@pytest.fixture
def system(open_records: Callable[[], StoreOfRecord], tmp_path: Path) -> Iterator[CognitiveSystem]:
    records = open_records()
    index: Any = CountingIndex(EdgeVectorStore(tmp_path / "edge"))
    opened = _system(records, index)
    yield opened
    opened.close()


@pytest.fixture
def serving(open_records: Callable[[], StoreOfRecord], tmp_path: Path) -> Iterator[CognitiveSystem]:
    """A system as a server builds one: its links, ranking rows and the query's word counts kept
    in memory (``replicas``), built."""
    records = open_records()
    index: Any = CountingIndex(EdgeVectorStore(tmp_path / "edge"))
    opened = _system(records, index, follow=True)
    for replica in opened.followed:
        replica.build()
    yield opened
    opened.close()


def _system(records: StoreOfRecord, index: Any, *, follow: bool = False) -> CognitiveSystem:
    """A system as build_system makes one, its index looked at as a server's opener does first;
    with ``follow``, as a server's (its state in memory, not yet built)."""
    coverage = IndexCoverage(index, records.outbox.to_be_indexed)
    links, ranking, words = (
        FollowedLinks(records),
        FollowedRanking(records, DIMENSION),
        FollowedWords(records),
    )
    kept = {"links": links, "ranking": ranking, "at_hand": (ranking, words)} if follow else {}
    retriever = Retriever(records, index, RetrievalConfig(words_in_index=True), coverage, **kept)
    followed = (links, ranking, words) if follow else ()
    opened = CognitiveSystem(records, index, HashEncoder(DIMENSION), retriever, followed=followed)
    _conversation(opened)
    coverage.look()
    return opened


def _conversation(system: CognitiveSystem) -> None:
    """Turns with their links in time (a question and its answer among them), a note superseded
    by another, and notes of another session: every stage of recall has something to read."""
    turns = [
        ("Ana", "Did you book the ferry to the island for Saturday?"),
        ("Ben", "Yes, the early ferry, the harbour office confirmed the tickets"),
        ("Ana", "Then we pack the tent and the ferry snacks on Friday"),
    ]
    for speaker, text in turns:
        system.store(text, session_id="trip", speaker=speaker)
    old = system.store("The ferry leaves from pier 2", session_id="notes").memory.id
    new = system.store("The ferry leaves from pier 4 since March", session_id="notes").memory.id
    system.records.links.link((new, old, "supersedes"), None, None)
    system.store("Ferry timetables change in winter", session_id="other")
    for n in range(12):
        system.store(f"Garden note {n}: the tomatoes in bed {n} need water", session_id="garden")
    system.flush()


def _recall(
    system: CognitiveSystem,
    *,
    bridges: bool = False,
    detail: Detail = "full",
    filters: RecallFilters | None = None,
    query: str = "ferry tickets harbour",
) -> tuple[RecallResult, list[str], Transactions]:
    index = system.vectors
    assert isinstance(index, CountingIndex)
    transactions = Transactions()
    database = system.records.database
    database.trace(transactions.trace)
    index.calls.clear()
    index.counting = True
    try:
        answer = recall(system, query, None, 10, bridges, filters, project="default", detail=detail)
    finally:
        index.counting = False
        database.trace(None)
    return answer, list(index.calls), transactions


def test_a_recall_makes_one_call_to_the_index_and_two_reads(system: CognitiveSystem) -> None:
    answer, calls, transactions = _recall(system)

    assert answer.total_results >= 3
    assert calls == ["search_with_words"]
    assert (transactions.reads, transactions.writes) == (2, 0)
    read = " ".join(transactions.statements)  # links, supersession and records among them
    assert all(table in read for table in ("FROM connections", "FROM relations", "FROM memories"))


def test_with_its_state_in_memory_a_recall_searches_first_and_reads_once(serving: CognitiveSystem) -> None:
    query = "ferry tomatoes garden"  # words no correction is looked for: each held by several
    _recall(serving, query=query)  # the first reads the query's counts, and keeps them

    answer, calls, transactions = _recall(serving, query=query)

    assert answer.total_results >= 3
    assert calls == ["search_with_words"]
    assert (transactions.reads, transactions.writes) == (1, 0)
    read = " ".join(transactions.statements)
    assert "vocabulary" not in read and "document_frequencies" not in read
    assert read.count("FROM change_log WHERE seq >") == 1  # one look at the log for every table


def test_after_another_process_writes_the_query_is_read_again_and_searched_again(
    serving: CognitiveSystem, open_records: Callable[[], StoreOfRecord]
) -> None:
    query = "ferry tomatoes garden"
    _recall(serving, query=query)
    other = open_records()  # another process's connection
    try:
        writer = CognitiveSystem(
            other,
            serving.vectors,
            HashEncoder(DIMENSION),
            Retriever(other, serving.vectors, RetrievalConfig()),
        )
        writer.store("The garden ferry carries tomatoes on Sundays", session_id="garden")
        writer.flush()
    finally:
        other.close()

    answer, calls, transactions = _recall(serving, query=query)

    # Searched with the counts it held, which the store no longer gives: read again inside the
    # one read, and searched again; the new memory is found.
    assert calls == ["search_with_words", "search_with_words"]
    assert (transactions.reads, transactions.writes) == (1, 0)
    assert "garden ferry" in answer.model_dump_json()


def test_the_first_recall_of_a_process_whose_index_was_not_looked_at_counts_both_once(
    system: CognitiveSystem, store_of_record: str
) -> None:
    system.retriever.coverage = IndexCoverage(system.vectors, system.records.outbox.to_be_indexed)

    _, first_calls, first = _recall(system)
    _, calls, transactions = _recall(system)

    # The store's count of the memories is read on a connection of its own (recalls do not wait
    # for it), which PostgreSQL's trace sees and SQLite's does not.
    apart = 1 if store_of_record == "postgres" else 0
    assert (first_calls, first.reads) == (["count", "search_with_words"], 2 + apart)
    assert (calls, transactions.reads) == (["search_with_words"], 2)


def test_bridges_add_one_call_for_every_anchor_and_no_read(system: CognitiveSystem) -> None:
    _, calls, transactions = _recall(system, bridges=True)

    assert calls == ["search_with_words", "search_many"]
    assert (transactions.reads, transactions.writes) == (2, 0)


def test_with_its_state_in_memory_bridges_add_no_read(serving: CognitiveSystem) -> None:
    _recall(serving, bridges=True)
    _, _, without = _recall(serving)

    _, calls, transactions = _recall(serving, bridges=True)

    assert calls == ["search_with_words", "search_many"]
    assert (transactions.reads, transactions.writes) == (without.reads, 0)


def test_a_brief_answer_reads_the_short_ids_once_more(system: CognitiveSystem) -> None:
    _, calls, transactions = _recall(system, detail="brief")

    assert calls == ["search_with_words"]
    assert (transactions.reads, transactions.writes) == (3, 0)


@pytest.mark.stores("sqlite", reason="FTS5's words are SQLite's; with PostgreSQL they are the index's")
def test_with_the_words_in_fts5_the_words_join_the_read_after_the_search(system: CognitiveSystem) -> None:
    system.retriever.config = replace(system.retriever.config, words_in_index=False)

    answer, calls, transactions = _recall(system)

    assert answer.total_results >= 3
    assert calls == ["search"]
    assert (transactions.reads, transactions.writes) == (2, 0)


def test_under_a_session_filter_the_index_searches_the_sessions_memories(system: CognitiveSystem) -> None:
    answer, calls, transactions = _recall(system, filters=RecallFilters(session="trip"))

    assert answer.total_results == 3  # the trip's turns
    # Whether the index holds the sessions (the store keeps the answer: nothing is asked of Edge),
    # then the search, given the session.
    assert calls == ["has_sessions", "search_with_words"]
    assert (transactions.reads, transactions.writes) == (2, 0)


def test_while_the_index_fails_recall_still_reads_twice(
    system: CognitiveSystem, store_of_record: str
) -> None:
    index = system.vectors
    assert isinstance(index, CountingIndex)
    index.failing = True

    answer, calls, transactions = _recall(system, bridges=True)

    assert answer.degraded
    # Found by FTS5's words on SQLite; with PostgreSQL the words are the index's (docs/team.md).
    assert answer.total_results >= 3 if store_of_record == "sqlite" else answer.total_results == 0
    assert calls == ["search_with_words"]  # degraded: no bridges
    assert (transactions.reads, transactions.writes) == (2, 0)


# A table read in full: every other step of a plan seeks an index or key (SEARCH), or walks the
# rows of a subquery that already sought one (unnamed, or named ``AS gap0``: a CO-ROUTINE or a
# MATERIALIZE step of its plan).
_SCAN = re.compile(r"SCAN (\S+)")
_SUBQUERY = re.compile(r"(?:CO-ROUTINE|MATERIALIZE) (\S+)")


def _scans(connection: sqlite3.Connection, statements: list[str]) -> list[str]:
    """The statements whose query plan reads a table in full, or touches FTS5."""
    queries = [s for s in statements if s.split(None, 1)[0] in ("SELECT", "WITH")]
    plans = {s: [row[3] for row in connection.execute(f"EXPLAIN QUERY PLAN {s}")] for s in queries}
    return [s for s, plan in plans.items() if "fts" in s.lower() or _table_scanned(plan)]


def _table_scanned(plan: list[str]) -> bool:
    subqueries = {found[1] for step in plan if (found := _SUBQUERY.match(step))}
    scanned = {found[1] for step in plan if (found := _SCAN.match(step))}
    return any(not name.startswith("(subquery") and name not in subqueries for name in scanned)


@pytest.mark.stores("sqlite", reason="the plans read are SQLite's (EXPLAIN QUERY PLAN)")
@pytest.mark.parametrize("session", [None, "trip"])
def test_with_a_qdrant_server_the_search_is_one_call_and_sqlite_reads_points(
    server: tuple[CognitiveSystem, CountingIndex], session: str | None
) -> None:
    system, client = server
    client.counting = True

    answer, calls, transactions = _recall(system, filters=RecallFilters(session=session) if session else None)

    client.counting = False
    assert answer.total_results == 3 if session else answer.total_results >= 3
    assert calls == (["has_sessions", "search_with_words"] if session else ["search_with_words"])
    assert client.calls == ["query_batch_points"]  # meaning and words in one request
    assert (transactions.reads, transactions.writes) == (2, 0)
    assert _scans(system.records.database._conn, transactions.statements) == []
