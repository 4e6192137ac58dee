"""What a background index build costs the process that serves the store (docs/storage.md).

python -m bench background-index [--memories 20000] [--real]

Fills a store in bulk without building its index (the hash encoder unless ``--real``), then asks
the owner's watcher to build it in the background, as it does for memories stored one by one.
Meanwhile the serving process searches every 10 ms and a thread ticks every 5 ms: the report gives
the build's and the swap's seconds, the searches' p50 and slowest during the build, the longest
the ticking thread was held up (the GIL held by the swap), and the search p50 once the index is in.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.corpus import memory_texts, query_texts
from bench.latency import RESULTS, percentiles
from cognitive_memory.encoding import Encoder, HashEncoder
from cognitive_memory.index import EdgeVectorStore
from cognitive_memory.index.shared_store import SharedVectorStore
from cognitive_memory.main import build_system, model_encoder
from cognitive_memory.replicas.index_build import BackgroundIndexer
from cognitive_memory.settings import Settings

__all__ = ["main", "run"]


def run(memories: int, real: bool) -> dict[str, Any]:
    settings = Settings(env_file=None)
    encoder: Encoder = model_encoder(settings) if real else HashEncoder(384)
    with tempfile.TemporaryDirectory() as tmp:
        settings.storage.data_dir = Path(tmp)
        system = build_system(settings, encoder=encoder)
        try:
            texts = memory_texts(memories)
            for start in range(0, memories, 1000):
                system.store_many(texts[start : start + 1000])  # no build: bulk paths call it themselves
            vectors = system.vectors
            assert isinstance(vectors, SharedVectorStore)
            local = vectors._local  # noqa: SLF001 - this process owns the shard
            assert isinstance(local, EdgeVectorStore) and isinstance(local.watcher, BackgroundIndexer)
            cues = list(encoder.encode(query_texts(50)))
            return _measure(local, local.watcher, cues, memories)
        finally:
            system.close()


def _measure(
    store: EdgeVectorStore, watcher: BackgroundIndexer, cues: list[Any], memories: int
) -> dict[str, Any]:
    gaps: list[float] = []
    done = threading.Event()

    def tick() -> None:
        last = time.perf_counter()
        while not done.is_set():
            time.sleep(0.005)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticker = threading.Thread(target=tick)
    ticker.start()
    started = time.perf_counter()
    assert watcher.check(), "no build started"
    during = []
    while watcher.running or watcher.builds == 0:
        begin = time.perf_counter()
        store.search(cues[len(during) % len(cues)], 50, precise=True)
        during.append(time.perf_counter() - begin)
        time.sleep(0.01)
    total = time.perf_counter() - started
    done.set()
    ticker.join()
    after = []
    for cue in cues:
        begin = time.perf_counter()
        store.search(cue, 50, precise=True)
        after.append(time.perf_counter() - begin)
    return {
        "benchmark": "background-index",
        "memories": memories,
        "build_and_swap_seconds": round(total, 2),
        "build_seconds": round(watcher.last_timings[0], 2) if watcher.last_timings else None,
        "swap_seconds": round(watcher.last_timings[1], 3) if watcher.last_timings else None,
        "longest_stall_ms": round(max(gaps) * 1000, 1),
        "search_during_build": {**percentiles(during), "max_ms": round(max(during) * 1000, 1)},
        "search_after": percentiles(after),
        "indexed_vectors": store.unindexed()[0] - store.unindexed()[1],
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench background-index", description=__doc__)
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument(
        "--real", action="store_true", help="embed with the configured model (slower to fill)"
    )
    args = parser.parse_args(argv)
    result = run(args.memories, args.real)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"background-index-{args.memories}.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))  # noqa: T201 - the benchmark's report goes to stdout
