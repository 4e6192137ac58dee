"""What the store call that finds the words' average length drifted costs (docs/storage.md).

python -m bench reweigh [--memories 15000] [--inline 2000]

Fills a store in bulk with short notes (the hash encoder), then stores long notes one by one until
one of them drifts the store's average length from the one its word vectors were weighed against.
The report gives that store call's milliseconds against the p50 of the store calls before it, and
how long the background pass took to weigh every memory's words again. ``--inline`` sets
``index_replication.REWEIGH_INLINE`` (stores up to that size weigh them again inside the call; the
release before 2026-11-26 evening did it up to 20,000).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.latency import RESULTS
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.main import build_system
from cognitive_memory.replicas import index_replication as replication
from cognitive_memory.settings import Settings

__all__ = ["main", "run"]

CHUNK = 1_000


def run(memories: int, inline: int) -> dict[str, Any]:
    kept, replication.REWEIGH_INLINE = replication.REWEIGH_INLINE, inline
    try:
        return _measure(memories, inline)
    finally:
        replication.REWEIGH_INLINE = kept


def _measure(memories: int, inline: int) -> dict[str, Any]:
    settings = Settings(env_file=None)
    with tempfile.TemporaryDirectory() as tmp:
        settings.storage.data_dir = Path(tmp)
        system = build_system(settings, encoder=HashEncoder(384))
        try:
            notes = [f"note {n} about kafka lag and topic {n % 97}" for n in range(memories)]
            for start in range(0, memories, CHUNK):
                system.store_many(notes[start : start + CHUNK], session_id=f"bulk-{start}")
            system.words_upgrade.close()  # the pass is timed below, not run by the build's thread
            documents = system.records.word_documents
            before, seconds = [], 0.0
            for n in range(memories):
                weighed_with = documents.weighting_average()
                started = time.perf_counter()
                long = " ".join(f"word{n}x{k}" for k in range(60))
                system.store(f"a much longer note number {n} about {long}", session_id=f"long-{n}")
                seconds = time.perf_counter() - started
                if documents.weighting_average() != weighed_with:
                    break
                before.append(seconds)
            pending = system.words_upgrade.reweigh_progress()
            started = time.perf_counter()
            while system.words_upgrade.step():
                pass
            return {
                "benchmark": "reweigh",
                "memories_when_drifted": memories + len(before) + 1,
                "reweigh_inline_up_to": inline,
                "drifting_store_ms": round(seconds * 1000, 1),
                "other_stores_p50_ms": round(statistics.median(before) * 1000, 2),
                "background_pass": None if pending is None else round(time.perf_counter() - started, 2),
            }
        finally:
            system.close()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench reweigh", description=__doc__)
    parser.add_argument("--memories", type=int, default=15_000)
    parser.add_argument("--inline", type=int, default=replication.REWEIGH_INLINE)
    args = parser.parse_args(argv)
    result = run(args.memories, args.inline)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"reweigh-{args.memories}-{args.inline}.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))  # noqa: T201 - the benchmark's report goes to stdout
