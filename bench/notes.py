"""Recall on notes, not chat: the npm READMEs of ../shared/data/npm-readmes.

python -m bench readmes

Loads every README as `memory_system load` does (one memory per section), asks each package's
own one-line description (which never names the package) and counts a hit at k when a memory of
that package's README is among the first k core + peripheral memories. Results go to
``bench/results/readmes.json``.
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
from cognitive_memory.main import build_system, model_encoder
from cognitive_memory.settings import Settings
from interfaces.cli import CognitiveCLI

__all__ = ["main", "run"]

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "npm-readmes"
KS = (1, 5, 10)


def run(data: Path) -> dict[str, Any]:
    queries = json.loads((data / "queries.json").read_text())
    settings = Settings(env_file=None)
    encoder = model_encoder(settings)
    encoder.warm_up()
    with tempfile.TemporaryDirectory() as directory:
        settings.storage.data_dir = Path(directory)
        system = build_system(settings, encoder=encoder)
        try:
            cli = CognitiveCLI(system)
            loaded = cli.load_markdown(str(data / "readmes"))
            hits, ranks, latencies = dict.fromkeys(KS, 0), [], []
            for entry in queries:
                started = time.perf_counter()
                result = cli.retrieve_memories(entry["query"], ["core", "peripheral"], max(KS), False)
                latencies.append(time.perf_counter() - started)
                files = [
                    m.metadata.get("source_path", "")
                    for m in (*result.memories.core, *result.memories.peripheral)
                ]
                rank = next(
                    (i for i, path in enumerate(files, start=1) if path.endswith("/" + entry["file"])), None
                )
                ranks.append(rank)
                for k in KS:
                    hits[k] += rank is not None and rank <= k
        finally:
            system.close()
    return {
        "benchmark": "readmes",
        "packages": len(queries),
        "memories": loaded.chunks.added,
        **{f"hit@{k}": round(hits[k] / len(queries), 3) for k in KS},
        "mrr": round(sum(1 / r for r in ranks if r) / len(queries), 3),
        "recall_p50_ms": round(statistics.median(latencies) * 1000, 2),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench readmes", description=__doc__)
    parser.add_argument("--data", type=Path, default=DATA)
    result = run(parser.parse_args(argv).data)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "readmes.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))  # noqa: T201 - the benchmark's report goes to stdout
