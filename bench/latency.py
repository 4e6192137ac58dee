"""Store and recall latency through the MCP layer (in-memory client), beside the encoder's own.

python -m bench latency --memories 1000 --queries 100

The system is built as a server builds it (recall reads its state kept in memory, ``replicas``).
With ``COGNITIVE_MEMORY_DATABASE_URL`` set the store of record is that PostgreSQL database (an
empty one) and the result goes to ``latency-<memories>-postgresql.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from bench.corpus import memory_texts, query_texts
from cognitive_memory.encoding import Encoder, SentenceBertEncoder
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem
from interfaces.mcp_server import create_server

__all__ = ["fill", "main", "percentiles", "progress", "run", "through_mcp", "time_each"]

RESULTS = Path(__file__).parent / "results"
INGEST_CHUNK = 1000


def progress(bench: str, message: str) -> None:
    """A benchmark's progress line, on stderr (its report goes to stdout)."""
    print(f"[bench {bench}] {message}", file=sys.stderr, flush=True)  # noqa: T201 - progress on stderr


def percentiles(samples: Sequence[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000, 2),
        "n": len(ordered),
    }


def time_each(call: Callable[[str], Any], texts: Sequence[str]) -> list[float]:
    samples = []
    for text in texts:
        start = time.perf_counter()
        call(text)
        samples.append(time.perf_counter() - start)
    return samples


async def through_mcp(
    encoder: Encoder, memories: int, queries: int, data_dir: Path, words: str | None = None
) -> dict[str, Any]:
    """Ingest (or reuse a kept store), then store and recall through the in-memory MCP client, each
    call paired with the encoder; ``words`` (fts5 or index) sets where recall searches the words."""
    settings = Settings(env_file=None)
    settings.storage.data_dir = data_dir
    if words:
        settings.recall.words = "index" if words == "index" else "fts5"
    system = build_system(settings, encoder=encoder, follow_changes=True)
    texts, cues = memory_texts(memories), query_texts(queries)
    try:
        preload = texts[:-queries]
        reused, ingest_seconds, paired = fill(system, encoder, preload)
        async with Client(create_server(system)) as client:
            store, store_encode = await _paired(client, encoder, "store_memory", "text", texts[-queries:])
            recall, recall_encode = await _paired(client, encoder, "recall_memories", "query", cues)
        return {
            "encoder_batch1_paired": {
                "store": percentiles(store_encode),
                "recall": percentiles(recall_encode),
            },
            "memories": system.records.memories.counts().total,
            "reused_store": reused,
            "ingest_per_second": round(len(preload) / ingest_seconds, 1) if ingest_seconds else None,
            "ingest_seconds": round(ingest_seconds, 1),
            "ingest_over_encoding_paired": round(paired, 2),
            "store": percentiles(store),
            "recall": percentiles(recall),
        }
    finally:
        system.close()


async def _paired(
    client: Client, encoder: Encoder, tool: str, field: str, texts: Sequence[str]
) -> tuple[list[float], list[float]]:
    """Call ``tool`` once per text, each call right after the encoder alone embeds the same text:
    the machine's load drifts, and these pairs give ratios that drift with it."""
    calls, encodings = [], []
    for text in texts:
        start = time.perf_counter()
        encoder.encode([text])
        encodings.append(time.perf_counter() - start)
        start = time.perf_counter()
        result = await client.call_tool(tool, {field: text})
        calls.append(time.perf_counter() - start)
        assert not result.is_error, result.content
    return calls, encodings


def fill(system: CognitiveSystem, encoder: Encoder, texts: Sequence[str]) -> tuple[bool, float, float]:
    """Store ``texts`` in bulk unless the store holds as many already: a kept store (``--keep``)
    is measured as it is. Returns whether it was reused, the ingest's seconds and its paired ratio
    (both 0.0 when reused; see ``_ingest``)."""
    if system.records.memories.counts().total >= len(texts):
        return True, 0.0, 0.0
    return False, *_ingest(system, encoder, texts)


def _ingest(system: CognitiveSystem, encoder: Encoder, texts: Sequence[str]) -> tuple[float, float]:
    """Store ``texts`` in chunks; returns the seconds taken and, because the machine's load drifts,
    a paired ratio: for every 10th chunk the encoder alone embeds it just before it is stored, and
    the ratio is (encoding seconds) / (store_many seconds) over those chunks."""
    total = encoding = storing = 0.0
    for number, offset in enumerate(range(0, len(texts), INGEST_CHUNK)):
        chunk = texts[offset : offset + INGEST_CHUNK]
        if number % 10 == 0:
            started = time.perf_counter()
            encoder.encode(chunk)
            encoding += time.perf_counter() - started
        started = time.perf_counter()
        system.store_many(chunk)
        elapsed = time.perf_counter() - started
        total += elapsed
        storing += elapsed if number % 10 == 0 else 0.0
    started = time.perf_counter()
    system.build_index()  # as a bulk load does at its end; counted in the ingest time
    total += time.perf_counter() - started
    return total, encoding / storing


def run(memories: int, queries: int) -> dict[str, Any]:
    encoder = SentenceBertEncoder()
    encoder.warm_up()
    cues = query_texts(queries)
    encoder.encode(cues[:5])
    encoder_batch1 = percentiles(time_each(lambda text: encoder.encode([text]), cues))
    sample = memory_texts(512, seed=3)
    started = time.perf_counter()
    encoder.encode(sample)
    encoder_per_second = len(sample) / (time.perf_counter() - started)
    with tempfile.TemporaryDirectory() as tmp:
        mcp = anyio.run(through_mcp, encoder, memories, queries, Path(tmp))
    return {
        "benchmark": "latency",
        "store_of_record": "postgresql" if Settings(env_file=None).storage.database_url else "sqlite",
        "encoder_batch1": encoder_batch1,
        "encoder_batch_per_second": round(encoder_per_second, 1),
        **mcp,
        "ingest_over_encoder_throughput": round(mcp["ingest_per_second"] / encoder_per_second, 2),
        "recall_over_encoder_p50": round(mcp["recall"]["p50_ms"] / encoder_batch1["p50_ms"], 2),
        "store_over_encoder_p50": round(mcp["store"]["p50_ms"] / encoder_batch1["p50_ms"], 2),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench latency", description=__doc__)
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args(argv)
    result = run(args.memories, args.queries)
    RESULTS.mkdir(exist_ok=True)
    server = result["store_of_record"] == "postgresql"
    out = RESULTS / f"latency-{args.memories}{'-postgresql' if server else ''}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))  # noqa: T201 - the benchmark's report goes to stdout
