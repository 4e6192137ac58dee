"""What a recall does on this machine when the vector index is a Qdrant server (``QDRANT_URL``).

    python -m bench server [--memories 10000] [--queries 100] [--data PATH]

No Qdrant server runs here: qdrant-client's local mode stands in for one, in this process, behind
the same client API (``QdrantServerVectorStore`` cannot tell them apart). The store: ``--memories``
LoCoMo turns, cycled and marked as ``bench words`` takes them (each distinct turn embedded once by
the configured encoder, ``FirstPassEncoder``), stored in bulk. Then LoCoMo questions (``--queries``
for each way, cycled, each way its own) are recalled through the use-case layer
(``MemoryService.retrieve_memories``) two ways: ``core`` (no bridges, full records: one search, two
reads), ``tool_defaults`` (``recall_memories``' defaults: brief, bridges on) and ``session`` (as
``core``, under a session filter: the last 1,000 turns were stored as one session, and the
filter goes to the server as a condition on the payload's ``session_id``). Per recall, on the
recalling thread:

- the calls to the server and the bytes of their bodies as JSON, as qdrant-client's REST transport
  sends them and a server answers (HTTP headers left out);
- SQLite's read transactions and statements (BEGIN and COMMIT left out) and the time inside them;
- the local CPU time (``time.thread_time``) of the recall less what the encoder and the stand-in
  server spent: what stays on this machine besides the encoder. Beside it, the encoder's time.

The uses written after the answer (one write transaction on the bookkeeping thread) are counted
apart. Results: ``bench/results/server-<memories>.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from qdrant_client import QdrantClient

from bench.latency import RESULTS, progress
from bench.lived_in import cycled_turns
from bench.locomo import DEFAULT_DATA, questions
from bench.words import CHUNK, FirstPassEncoder
from cognitive_memory.core.memory import Vector
from cognitive_memory.encoding import Encoder
from cognitive_memory.index.qdrant_store import QdrantServerVectorStore
from cognitive_memory.main import EMBEDDING_DIMENSION, model_encoder
from cognitive_memory.retrieval import RankWeights, RetrievalConfig, Retriever
from cognitive_memory.service import MemoryService, RecallFilters
from cognitive_memory.settings import Settings
from cognitive_memory.storage import SQLiteMemoryStore
from cognitive_memory.system import CognitiveSystem

__all__ = ["main", "measure"]

# The last chunk of turns is stored as one session, which the ``session`` way recalls under a
# session filter (the request names the session: ``VectorStore.has_sessions``).
SESSION = "asked"
_WAYS: dict[str, dict[str, Any]] = {
    "core": {"include_bridges": False, "detail": "full"},
    "tool_defaults": {"detail": "brief"},
    "session": {"include_bridges": False, "detail": "full", "filters": RecallFilters(session=SESSION)},
}


class _Meter:
    """What the recalling thread spends, by part, while ``on``: CPU seconds in the server and the
    encoder, wall seconds in SQLite's reads, the server's calls and their JSON bytes, SQLite's
    transactions and statements; and the write transactions of any thread."""

    def __init__(self) -> None:
        self.on = False
        self.parts: dict[str, float] = {}
        self._depth = 0

    def reset(self) -> None:
        seconds = ("server_cpu", "encoder_cpu", "encoder_s", "sqlite_read_s", "sqlite_read_cpu")
        counts = ("calls", "sent", "received", "reads", "statements", "writes")
        self.parts = dict.fromkeys((*seconds, *counts), 0.0)

    def recalling(self) -> bool:
        """Whether what runs now is the recall being measured (on, on the recalling thread)."""
        return self.on and threading.current_thread() is threading.main_thread()

    def cpu(self, part: str, call: Callable[[], Any]) -> Any:
        if not self.recalling():
            return call()
        started = time.thread_time()
        try:
            return call()
        finally:
            self.parts[part] += time.thread_time() - started

    def read(self, call: Callable[[], Any]) -> Any:
        if not self.recalling() or self._depth:
            return call()
        self._depth += 1
        started, cpu = time.perf_counter(), time.thread_time()
        try:
            return call()
        finally:
            self._depth -= 1
            self.parts["sqlite_read_s"] += time.perf_counter() - started
            self.parts["sqlite_read_cpu"] += time.thread_time() - cpu

    def trace(self, statement: str) -> None:
        if not self.on or statement.startswith("--"):
            return
        head = statement.split(None, 1)[0]
        if statement.startswith("BEGIN IMMEDIATE"):
            self.parts["writes"] += 1
        elif not self.recalling() or head in ("COMMIT", "ROLLBACK"):
            return
        elif head == "BEGIN":
            self.parts["reads"] += 1
        else:
            self.parts["statements"] += 1


class _MeteredClient:
    """A qdrant client whose calls are counted, timed and sized as REST bodies."""

    def __init__(self, inner: QdrantClient, meter: _Meter) -> None:
        self._inner = inner
        self._meter = meter

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._inner, name)
        if not callable(attribute):
            return attribute

        def metered(*args: Any, **kwargs: Any) -> Any:
            answer = self._meter.cpu("server_cpu", lambda: attribute(*args, **kwargs))
            if self._meter.recalling():
                self._meter.parts["calls"] += 1
                self._meter.parts["sent"] += _json_bytes([*args[1:], *kwargs.values()])
                self._meter.parts["received"] += _json_bytes({"result": answer, "status": "ok", "time": 0.0})
            return answer

        return metered


class _MeteredEncoder(FirstPassEncoder):
    def __init__(self, encoder: Encoder, meter: _Meter) -> None:
        super().__init__(encoder)
        self._meter = meter

    def encode(self, texts: Sequence[str]) -> Vector:
        started = time.perf_counter()
        vectors: Vector = self._meter.cpu("encoder_cpu", lambda: super(_MeteredEncoder, self).encode(texts))
        if self._meter.recalling():
            self._meter.parts["encoder_s"] += time.perf_counter() - started
        return vectors


def _json_bytes(value: Any) -> int:
    def plain(item: Any) -> Any:
        if hasattr(item, "model_dump"):
            return item.model_dump(mode="json", exclude_none=True)
        if isinstance(item, list | tuple):
            return [plain(part) for part in item]
        if isinstance(item, dict):
            return {key: plain(part) for key, part in item.items()}
        return item

    return len(json.dumps(plain(value), separators=(",", ":")).encode())


def _system(directory: Path, encoder: Encoder, meter: _Meter) -> CognitiveSystem:
    """As ``build_system`` assembles it with ``QDRANT_URL``, over the metered stand-in server."""
    records = SQLiteMemoryStore(directory / "memories.db")
    client: Any = _MeteredClient(QdrantClient(location=":memory:"), meter)
    vectors = QdrantServerVectorStore(client, "memories", "local", EMBEDDING_DIMENSION)
    recall = Settings(env_file=None).recall
    config = RetrievalConfig(
        bridge_threshold=recall.bridge_threshold,
        weights=RankWeights(session_lesson_boost=recall.session_lesson_boost),
    )
    database = records.database
    plain_read = database.read
    # Every read of the records goes through this one method: the bench times it in place.
    database.read = lambda query: meter.read(lambda: plain_read(query))  # type: ignore[method-assign]
    database.trace(meter.trace)
    return CognitiveSystem(records, vectors, encoder, Retriever(records, vectors, config))


def measure(data: Path, count: int, queries: int) -> dict[str, Any]:
    """Build the store, then recall ``queries`` questions each way; the means per recall."""
    samples = json.loads(data.read_text())
    asked = [q.text for sample in samples for q in questions(sample)]
    cues = [asked[i % len(asked)] for i in range(queries * len(_WAYS))]
    meter = _Meter()
    encoder = model_encoder(Settings(env_file=None))
    encoder.warm_up()
    with tempfile.TemporaryDirectory() as tmp:
        system = _system(Path(tmp), _MeteredEncoder(encoder, meter), meter)
        try:
            texts = [text for text, _ in cycled_turns(samples, count)]
            for offset in range(0, len(texts), CHUNK):
                _progress(f"stored {offset} of {count} turns")
                last = offset + CHUNK >= len(texts)
                system.store_many(texts[offset : offset + CHUNK], session_id=SESSION if last else None)
            system.flush()
            service = MemoryService(system)
            ways = {
                way: _recalls(system, service, meter, cues[n * queries : (n + 1) * queries], options)
                for n, (way, options) in enumerate(_WAYS.items())
            }
        finally:
            system.close()
    stand_in = "qdrant-client local mode"
    return {"benchmark": "server", "memories": count, "queries": queries, "server": stand_in, **ways}


def _recalls(
    system: CognitiveSystem,
    service: MemoryService,
    meter: _Meter,
    cues: Sequence[str],
    options: dict[str, Any],
) -> dict[str, Any]:
    rows: list[dict[str, float]] = []
    for cue in cues:
        meter.reset()
        meter.on = True
        started = time.thread_time()
        service.retrieve_memories(cue, **options)
        total = time.thread_time() - started
        row = {**meter.parts, "local_cpu": total - meter.parts["server_cpu"] - meter.parts["encoder_cpu"]}
        system.flush()  # the uses written after the answer, on the bookkeeping thread
        meter.on = False
        rows.append(row | {"writes": meter.parts["writes"]})
    mean = {key: statistics.fmean(row[key] for row in rows) for key in rows[0]}
    timed = ("local_cpu", "sqlite_read_s", "sqlite_read_cpu")
    median = {key: statistics.median(row[key] for row in rows) for key in timed}
    return {
        "server_calls": round(mean["calls"], 2),
        "bytes_sent": round(mean["sent"]),
        "bytes_received": round(mean["received"]),
        "sqlite_read_transactions": round(mean["reads"], 2),
        "sqlite_statements": round(mean["statements"], 2),
        "sqlite_reads_p50_ms": round(median["sqlite_read_s"] * 1000, 2),
        "sqlite_reads_cpu_p50_ms": round(median["sqlite_read_cpu"] * 1000, 2),
        "local_cpu_p50_ms": round(median["local_cpu"] * 1000, 2),
        "encoder_mean_ms": round(mean["encoder_s"] * 1000, 2),
        "stand_in_server_cpu_mean_ms": round(mean["server_cpu"] * 1000, 2),
        "write_transactions_after_the_answer": round(mean["writes"], 2),
    }


_progress = partial(progress, "server")


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m bench server``: measure, write bench/results/server-<memories>.json, print it."""
    parser = argparse.ArgumentParser(prog="python -m bench server", description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--memories", type=int, default=10000)
    parser.add_argument("--queries", type=int, default=100, help="questions recalled each way")
    args = parser.parse_args(argv)
    if args.memories < 1 or args.queries < 1:
        parser.error("--memories and --queries must be at least 1")
    result = measure(args.data, args.memories, args.queries)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"server-{args.memories}.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))  # noqa: T201 - the benchmark's report goes to stdout
