"""bench/server.py: a recall over the stand-in Qdrant server is metered as one call with its JSON
bytes, two SQLite reads and the write of the uses after the answer."""

from __future__ import annotations

from pathlib import Path

from bench.server import _WAYS, SESSION, _Meter, _MeteredEncoder, _recalls, _system
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.service import MemoryService


def test_a_recall_is_metered_as_one_call_two_reads_and_the_local_rest(tmp_path: Path) -> None:
    meter = _Meter()
    system = _system(tmp_path, _MeteredEncoder(HashEncoder(384), meter), meter)
    try:
        system.store_many([f"Note {n}: the ferry to the island leaves from pier {n}" for n in range(20)])
        system.flush()
        measured = _recalls(
            system, MemoryService(system), meter, ["Which pier does the ferry leave from?"] * 3, _WAYS["core"]
        )
    finally:
        system.close()

    assert measured["server_calls"] == 1
    assert measured["bytes_sent"] > 384 * 2  # the query's embedding: 384 JSON numbers
    assert measured["bytes_received"] > 0
    assert (measured["sqlite_read_transactions"], measured["write_transactions_after_the_answer"]) == (2, 1)
    assert measured["sqlite_statements"] > 2
    assert measured["local_cpu_p50_ms"] > 0


def test_under_a_session_filter_the_one_call_names_the_sessions_memories(tmp_path: Path) -> None:
    meter = _Meter()
    system = _system(tmp_path, _MeteredEncoder(HashEncoder(384), meter), meter)
    try:
        system.store_many([f"Note {n}: the ferry to the island leaves from pier {n}" for n in range(20)])
        system.store_many([f"Ferry note {n} of the session" for n in range(30)], session_id=SESSION)
        system.flush()
        service = MemoryService(system)
        question = ["Which pier does the ferry leave from?"] * 3
        plain = _recalls(system, service, meter, question, _WAYS["core"])
        filtered = _recalls(system, service, meter, question, _WAYS["session"])
    finally:
        system.close()

    assert filtered["server_calls"] == 1
    assert filtered["bytes_sent"] >= plain["bytes_sent"] + 30 * 36  # the session's 30 ids
    assert filtered["sqlite_read_transactions"] == 2
