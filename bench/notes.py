"""Recall on notes, not chat: the npm READMEs of ../shared/data/npm-readmes.

python -m bench notes

Loads every README as `memory_system load` does (one memory per section), asks each package's
own one-line description (which never names the package) and counts a hit at k when a memory of
that package's README is among the first k. Three rankings go through the same harness and the
same store: our recall (core + peripheral, the relevance floor on), BM25 alone (the lexical index)
and MiniLM alone (exact cosine over every stored vector). Results go to
``bench/results/notes.json``.
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

import numpy as np

from bench.latency import RESULTS
from cognitive_memory.main import build_system, model_encoder
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem
from interfaces.cli import CognitiveCLI

__all__ = ["DATA", "main", "run"]

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "npm-readmes"
KS = (1, 5, 10)

Ranking = Callable[[str], list[str]]


def _rankings(system: CognitiveSystem, cli: CognitiveCLI) -> dict[str, Ranking]:
    """query -> memory ids, best first, for each ranking."""
    memories = [m for batch in system.memories.iter_memories() for m in batch]
    ids = [m.id for m in memories]
    matrix = np.stack([m.cognitive_embedding for m in memories if m.cognitive_embedding is not None])

    def recall(query: str) -> list[str]:
        result = cli.retrieve_memories(query, ["core", "peripheral"], max(KS), False)
        return [m.id for m in (*result.memories.core, *result.memories.peripheral)]

    def bm25(query: str) -> list[str]:
        return [memory_id for memory_id, _ in system.memories.lexical_search(query, max(KS))]

    def minilm(query: str) -> list[str]:
        scores = matrix @ system.encoder.encode([query])[0]
        return [ids[i] for i in np.argsort(-scores)[: max(KS)]]

    return {"recall": recall, "bm25": bm25, "minilm": minilm}


def _score(ranking: Ranking, queries: Sequence[dict[str, str]], file_of: dict[str, str]) -> dict[str, Any]:
    hits, reciprocal, latencies = dict.fromkeys(KS, 0), 0.0, []
    for entry in queries:
        started = time.perf_counter()
        ranked = ranking(entry["query"])
        latencies.append(time.perf_counter() - started)
        rank = next(
            (
                i
                for i, memory_id in enumerate(ranked, start=1)
                if file_of.get(memory_id, "").endswith("/" + entry["file"])
            ),
            None,
        )
        reciprocal += 1 / rank if rank else 0.0
        for k in KS:
            hits[k] += rank is not None and rank <= k
    return {
        **{f"recall@{k}": round(hits[k] / len(queries), 3) for k in KS},
        "mrr": round(reciprocal / len(queries), 3),
        "p50_ms": round(statistics.median(latencies) * 1000, 2),
    }


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
            file_of = {
                m.id: str(m.metadata.get("source_path", ""))
                for batch in system.memories.iter_memories()
                for m in batch
            }
            scores = {
                name: _score(ranking, queries, file_of) for name, ranking in _rankings(system, cli).items()
            }
        finally:
            system.close()
    return {"benchmark": "notes", "packages": len(queries), "memories": loaded.chunks.added, **scores}


def table(result: dict[str, Any]) -> str:
    lines = [
        f"npm READMEs: {result['packages']} packages, {result['memories']} memories",
        f"{'ranking':<8} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6} {'p50 ms':>7}",
    ]
    for name in ("recall", "bm25", "minilm"):
        row = result[name]
        lines.append(
            f"{name:<8} {row['recall@1']:>6.3f} {row['recall@5']:>6.3f} {row['recall@10']:>6.3f} "
            f"{row['mrr']:>6.3f} {row['p50_ms']:>7}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench notes", description=__doc__)
    parser.add_argument("--data", type=Path, default=DATA)
    result = run(parser.parse_args(argv).data)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "notes.json").write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))  # noqa: T201 - the benchmark's report goes to stdout
    print(json.dumps(result, indent=2))  # noqa: T201
