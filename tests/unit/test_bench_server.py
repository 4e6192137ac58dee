"""bench/server.py: a recall over the stand-in Qdrant server is metered as one call with its JSON
bytes, two SQLite reads and the write of the uses after the answer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.server import _WAYS, SESSION, _Meter, _MeteredEncoder, _recalls, _system
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.service import MemoryService
from cognitive_memory.system import CognitiveSystem

QUESTION = ["Which pier does the ferry leave from?"] * 3


@pytest.fixture
def metered(tmp_path: Path) -> Iterator[tuple[CognitiveSystem, _Meter]]:
    """The bench's system over the stand-in server, metered, holding 20 notes about ferries."""
    meter = _Meter()
    system = _system(tmp_path, _MeteredEncoder(HashEncoder(384), meter), meter)
    try:
        system.store_many([f"Note {n}: the ferry to the island leaves from pier {n}" for n in range(20)])
        system.flush()
        yield system, meter
    finally:
        system.close()


def test_a_recall_is_metered_as_one_call_two_reads_and_the_local_rest(
    metered: tuple[CognitiveSystem, _Meter],
) -> None:
    system, meter = metered

    measured = _recalls(system, MemoryService(system), meter, QUESTION, _WAYS["core"])

    assert measured["server_calls"] == 1
    assert measured["bytes_sent"] > 384 * 2  # the query's embedding: 384 JSON numbers
    assert measured["bytes_received"] > 0
    assert (measured["sqlite_read_transactions"], measured["write_transactions_after_the_answer"]) == (2, 1)
    assert measured["sqlite_statements"] > 2
    assert measured["local_cpu_p50_ms"] > 0


def test_under_a_session_filter_the_one_call_names_the_session_not_its_memories(
    metered: tuple[CognitiveSystem, _Meter],
) -> None:
    system, meter = metered
    system.store_many([f"Ferry note {n} of the session" for n in range(30)], session_id=SESSION)
    system.flush()
    service = MemoryService(system)

    plain = _recalls(system, service, meter, QUESTION, _WAYS["core"])
    filtered = _recalls(system, service, meter, QUESTION, _WAYS["session"])

    assert filtered["server_calls"] == 1
    # The session's name, in the payload's session_id, where an older index took its 30 ids (36 bytes each).
    assert plain["bytes_sent"] < filtered["bytes_sent"] < plain["bytes_sent"] + 30 * 36
    assert filtered["sqlite_read_transactions"] == 2
