"""The whole performance suite in one run (docs/performance.md).

python -m bench suite [--memories 1000,10000] [--queries 100] [--stdio-queries 50] [--keep DIR]
                      [--words fts5|index]

1. The encoder alone: torch and ONNX Runtime on the same queries (batch-1 p50/p95), batch
   throughput, and the smallest cosine between their vectors.
2. For each scale: bulk ingest (``store_many`` in chunks of 1,000; every 10th chunk also embedded
   alone just before, for a paired ingest/encoder ratio), store and recall p50/p95
   through the in-memory MCP client; then a real ``memory_system serve mcp`` subprocess on the same
   data: cold start to ``initialize`` and to the first recall, store/recall over stdio, its RSS.
3. Ratios against the configured encoder's own numbers from the same run; the ``_paired`` ones
   embed each text alone right before the call that uses it, so load drift on a shared machine
   cancels out (trust those first).

``--words`` sets where recall searches the words, in this process and the server's
(``COGNITIVE_MEMORY_WORDS``); without it, recall's default.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import anyio

from bench import stdio
from bench.corpus import memory_texts, query_texts
from bench.encoders import compare
from bench.latency import RESULTS, progress, through_mcp
from bench.stdio import words_env
from cognitive_memory.encoding import Encoder, OnnxEncoder, SentenceBertEncoder
from cognitive_memory.settings import Settings

__all__ = ["main", "run"]


def run(
    scales: Sequence[int],
    queries: int,
    stdio_queries: int,
    keep: Path | None = None,
    words: str | None = None,
) -> dict[str, Any]:
    """Measure everything; returns the JSON-ready results. With ``keep``, each scale's store stays
    in ``keep/n<count>`` and a later run measures it again without the ingest (a 1,000,000-memory
    store takes most of an hour to build). ``words``: fts5 or index for recall (None: its default)."""
    settings = Settings(env_file=None)
    torch_encoder = SentenceBertEncoder(threads=settings.encoder.threads)
    onnx_encoder = OnnxEncoder(torch_encoder, settings.encoder.cache_dir, threads=settings.encoder.threads)
    cues = query_texts(queries)
    encoders = compare(torch_encoder, onnx_encoder, cues, memory_texts(512, seed=3))
    backend = settings.encoder.backend
    encoder: Encoder = onnx_encoder if backend == "onnx" else torch_encoder
    own = encoders[backend]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for count in scales:
            _progress(f"{count} memories: ingest and in-memory MCP client")
            data_dir = (keep or Path(tmp)) / f"n{count}"
            in_memory = anyio.run(through_mcp, encoder, count, queries, data_dir, words)
            _progress(f"{count} memories: memory_system serve mcp over stdio")
            new_texts = memory_texts(stdio_queries, seed=count)
            over_stdio = stdio.measure(data_dir, cues[:stdio_queries], new_texts, words_env(words))
            results.append(_scale(count, in_memory, over_stdio, own))
    return {
        "benchmark": "suite",
        "encoder_backend": backend,
        "words": words or "default",
        "encoders": encoders,
        "scales": results,
    }


def _scale(
    count: int, in_memory: dict[str, Any], over_stdio: dict[str, Any], own: dict[str, Any]
) -> dict[str, Any]:
    encoder_p50 = own["batch1"]["p50_ms"]
    paired = in_memory["encoder_batch1_paired"]
    ingest = in_memory["ingest_per_second"]
    return {
        "memories": in_memory["memories"],
        "requested": count,
        "reused_store": in_memory["reused_store"],
        "ingest_per_second": ingest,
        "ingest_seconds": in_memory["ingest_seconds"],
        "in_memory_client": {"store": in_memory["store"], "recall": in_memory["recall"]},
        "stdio": over_stdio,
        "encoder_batch1_paired": paired,
        "ratios": {
            "recall_p50_over_encoder_paired": _ratio(in_memory["recall"], paired["recall"]),
            "store_p50_over_encoder_paired": _ratio(in_memory["store"], paired["store"]),
            "recall_p50_over_encoder": round(in_memory["recall"]["p50_ms"] / encoder_p50, 2),
            "store_p50_over_encoder": round(in_memory["store"]["p50_ms"] / encoder_p50, 2),
            "stdio_recall_p50_over_encoder": round(over_stdio["recall"]["p50_ms"] / encoder_p50, 2),
            "stdio_store_p50_over_encoder": round(over_stdio["store"]["p50_ms"] / encoder_p50, 2),
            "ingest_over_encoder_throughput": round(ingest / own["batch_per_second"], 2) if ingest else None,
            "ingest_over_encoding_paired": in_memory["ingest_over_encoding_paired"],
        },
    }


def _ratio(calls: dict[str, float], encodings: dict[str, float]) -> float:
    return round(calls["p50_ms"] / encodings["p50_ms"], 2)


_progress = partial(progress, "suite")


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m bench suite``: run, write bench/results/suite-<scales>.json, print it."""
    parser = argparse.ArgumentParser(prog="python -m bench suite", description=__doc__)
    parser.add_argument("--memories", default="1000,10000", help="comma-separated scales, e.g. 1000,100000")
    parser.add_argument("--queries", type=int, default=100, help="stores and recalls per scale (in-memory)")
    parser.add_argument("--stdio-queries", type=int, default=50, help="calls per scale over stdio")
    parser.add_argument(
        "--keep", type=Path, help="keep each scale's store in DIR/n<count>; a store found there is reused"
    )
    parser.add_argument(
        "--words", choices=("fts5", "index"), help="where recall searches words (default: recall's own)"
    )
    args = parser.parse_args(argv)
    try:
        scales = [int(part) for part in args.memories.split(",") if part.strip()]
    except ValueError:
        parser.error(f"--memories takes comma-separated whole numbers, not {args.memories!r}")
    if not scales or min(scales) <= args.queries or args.stdio_queries > args.queries:
        parser.error("every scale must exceed --queries, and --stdio-queries may not exceed --queries")
    result = run(scales, args.queries, args.stdio_queries, args.keep, args.words)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"suite-{'-'.join(str(n) for n in scales)}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))  # noqa: T201 - the benchmark's report goes to stdout
