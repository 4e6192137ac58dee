"""What the change log costs the writes (docs/storage.md, "The change log").

python -m bench change-log [--memories 3000] [--recalls 200] [--runs 3]

Stores ``--memories`` notes in batches of 100 (the hash encoder: the writes, not the model, are
what is timed), then runs ``--recalls`` recalls and writes their uses, into a fresh store with the
change log's triggers and into one with them dropped, alternating, ``--runs`` times each. The
report gives each variant's medians and the ratio.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.corpus import memory_texts
from bench.latency import RESULTS
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings

__all__ = ["main", "run"]

BATCH = 100


def run(memories: int, recalls: int, runs: int) -> dict[str, Any]:
    texts = memory_texts(memories, seed=3)
    timed: dict[str, list[tuple[float, float]]] = {"logged": [], "unlogged": []}
    for _ in range(runs):
        for variant in timed:
            timed[variant].append(_once(texts, recalls, logged=variant == "logged"))
    medians = {
        variant: {
            "store_s": statistics.median(store for store, _ in times),
            "recalls_s": statistics.median(recall for _, recall in times),
        }
        for variant, times in timed.items()
    }
    return {
        "memories": memories,
        "recalls": recalls,
        "runs": runs,
        "medians": medians,
        "store_ratio": medians["logged"]["store_s"] / medians["unlogged"]["store_s"],
        "recalls_ratio": medians["logged"]["recalls_s"] / medians["unlogged"]["recalls_s"],
    }


def _once(texts: Sequence[str], recalls: int, *, logged: bool) -> tuple[float, float]:
    """Seconds to store ``texts`` and to run ``recalls`` recalls with their uses written."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as folder:
        settings = Settings(env_file=None)
        settings.storage.data_dir = Path(folder)
        system = build_system(settings, encoder=HashEncoder())
        try:
            if not logged:
                _drop_triggers(system.records.path)
            started = time.perf_counter()
            for start in range(0, len(texts), BATCH):
                system.store_many(texts[start : start + BATCH], session_id="bench")
            system.flush()
            stored = time.perf_counter() - started
            started = time.perf_counter()
            for text in texts[:recalls]:
                system.retrieve(text[:40], max_results=5)
            system.flush()
            return stored, time.perf_counter() - started
        finally:
            system.close()


def _drop_triggers(database: Path) -> None:
    with sqlite3.connect(database) as conn:
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
            conn.execute(f"DROP TRIGGER {name}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench change-log", description=__doc__)
    parser.add_argument("--memories", type=int, default=3_000)
    parser.add_argument("--recalls", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    result = run(args.memories, args.recalls, args.runs)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "change-log.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))  # noqa: T201 - the benchmark's report goes to stdout
