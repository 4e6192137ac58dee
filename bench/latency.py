"""Store and recall latency through the MCP layer (in-memory client), beside the encoder's own.

python -m bench latency --memories 1000 --queries 100
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from bench.corpus import memory_texts, query_texts
from cognitive_memory.encoding import SentenceBertEncoder
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from interfaces.mcp_server import create_server

__all__ = ["main", "run"]

RESULTS = Path(__file__).parent / "results"


def _percentiles(samples: Sequence[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000, 2),
        "n": len(ordered),
    }


def _time_each(call: Callable[[str], Any], texts: Sequence[str]) -> list[float]:
    samples = []
    for text in texts:
        start = time.perf_counter()
        call(text)
        samples.append(time.perf_counter() - start)
    return samples


async def _through_mcp(
    encoder: SentenceBertEncoder, memories: int, queries: int, data_dir: Path
) -> dict[str, Any]:
    settings = Settings(env_file=None)
    settings.storage.data_dir = data_dir
    system = build_system(settings, encoder=encoder)
    texts, cues = memory_texts(memories), query_texts(queries)
    try:
        bulk_start = time.perf_counter()
        vectors = encoder.encode(texts[:-queries])
        system_ingest = _bulk_load(system, texts[:-queries], vectors)
        bulk_seconds = time.perf_counter() - bulk_start
        async with Client(create_server(system)) as client:
            store, recall = [], []
            for text in texts[-queries:]:
                start = time.perf_counter()
                result = await client.call_tool("store_memory", {"text": text})
                store.append(time.perf_counter() - start)
                assert not result.is_error, result.content
            for cue in cues:
                start = time.perf_counter()
                result = await client.call_tool("recall_memories", {"query": cue})
                recall.append(time.perf_counter() - start)
                assert not result.is_error, result.content
        return {
            "memories": system.memories.counts().total,
            "preload_seconds": round(bulk_seconds, 2),
            "preloaded": system_ingest,
            "store": _percentiles(store),
            "recall": _percentiles(recall),
        }
    finally:
        system.close()


def _bulk_load(system: Any, texts: Sequence[str], vectors: Any) -> int:
    """Preload the store without the MCP layer (the bulk path is benchmarked elsewhere)."""
    from datetime import UTC, datetime

    from cognitive_memory.core.levels import classify
    from cognitive_memory.core.memory import CognitiveMemory

    now = datetime.now(UTC)
    batch = []
    for index, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
        level, kind = classify(text)
        batch.append(
            CognitiveMemory(
                id=f"00000000-0000-4000-8000-{index:012d}",
                content=text,
                hierarchy_level=level,
                memory_type=kind,
                created_date=now,
                timestamp=now,
                cognitive_embedding=vector,
            )
        )
    system.memories.add(batch)
    system.replay_outbox()
    return len(batch)


def run(memories: int, queries: int) -> dict[str, Any]:
    encoder = SentenceBertEncoder()
    encoder.warm_up()
    cues = query_texts(queries)
    encoder.encode(cues[:5])
    encoder_batch1 = _percentiles(_time_each(lambda text: encoder.encode([text]), cues))
    with tempfile.TemporaryDirectory() as tmp:
        mcp = anyio.run(_through_mcp, encoder, memories, queries, Path(tmp))
    return {
        "benchmark": "latency",
        "encoder_batch1": encoder_batch1,
        **mcp,
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
    out = RESULTS / f"latency-{args.memories}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))  # noqa: T201 - the benchmark's report goes to stdout
