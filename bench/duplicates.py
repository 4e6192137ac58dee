"""How the near-duplicate threshold was chosen (docs/tools.md: Duplicates and novelty).

python -m bench duplicates [--sample 300]

Two corpora, each split into projects as a user's memory would be: LoCoMo (one project per
conversation, one memory per dialogue turn as ``bench locomo`` stores them) and the npm READMEs
(one project, one memory per markdown section as ``memory_system load`` makes them).
- false alarms: the share of memories whose most similar *other* memory of the project reaches
  the threshold (distinct memories that a store would flag as "similar");
- catches: the share of edited copies (a clause added, punctuation changed, one word replaced)
  whose cosine to their original reaches it (restatements a store should flag);
- exact: memories whose text equals another's after case and whitespace folding (a store answers
  them ``duplicate: true``).
Then what the check costs a store: the novelty search (``SIMILAR_LIMIT`` nearest memories of the
project) and the same-text lookup, p50 at 1,000 and 10,000 memories, and at 10,000 again with the
HNSW index built.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.corpus import memory_texts, query_texts
from bench.latency import RESULTS
from bench.locomo import DEFAULT_DATA as LOCOMO_DATA
from bench.locomo import turns
from cognitive_memory.core.memory import DEFAULT_PROJECT, content_key
from cognitive_memory.encoding import Encoder
from cognitive_memory.index.vector_store import VectorFilter
from cognitive_memory.loaders.markdown import chunk_markdown
from cognitive_memory.main import build_system, model_encoder
from cognitive_memory.settings import Settings
from cognitive_memory.system import SIMILAR_LIMIT

__all__ = ["main", "run"]

READMES = Path(__file__).resolve().parents[2] / "shared" / "data" / "npm-readmes" / "readmes"
THRESHOLDS = (0.80, 0.85, 0.88, 0.90, 0.92, 0.95)
_WORD = re.compile(r"\b[a-z]{5,}\b")


def locomo_projects() -> list[list[str]]:
    conversations = json.loads(LOCOMO_DATA.read_text())
    return [[text for _, text, _ in turns(sample["conversation"])] for sample in conversations]


def readme_projects() -> list[list[str]]:
    chunks = [
        c.content for path in sorted(READMES.glob("*.md")) for c in chunk_markdown(path.read_text(), path)
    ]
    return [chunks]


def edited(text: str, rng: random.Random) -> list[str]:
    """Restatements of ``text``: a clause added, its punctuation changed, one word replaced."""
    words = _WORD.findall(text)
    swapped = text.replace(rng.choice(words), "something", 1) if words else text + " indeed"
    return [text + " This is still the case.", text.rstrip(".!?") + "!!", swapped]


def nearest_other(vectors: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    similarity = vectors @ vectors.T
    np.fill_diagonal(similarity, -1.0)
    return similarity.max(axis=1)


def measure(encoder: Encoder, projects: Sequence[Sequence[str]], sample: int) -> dict[str, Any]:
    rng = random.Random(5)
    nearest: list[float] = []
    exact = 0
    catches: list[float] = []
    for texts in projects:
        vectors = np.stack(encoder.encode(list(texts)))
        nearest += nearest_other(vectors).tolist()
        exact += len(texts) - len({content_key(text) for text in texts})
        for index in rng.sample(range(len(texts)), min(sample // len(projects) + 1, len(texts))):
            variants = np.stack(encoder.encode(edited(texts[index], rng)))
            catches += (variants @ vectors[index]).tolist()
    total = len(nearest)
    return {
        "memories": total,
        "exact_duplicates": exact,
        "edited_copies": len(catches),
        "false_alarm_share": {str(t): round(sum(n >= t for n in nearest) / total, 4) for t in THRESHOLDS},
        "catch_share": {str(t): round(sum(c >= t for c in catches) / len(catches), 4) for t in THRESHOLDS},
    }


def check_cost(encoder: Encoder, data_dir: Path) -> dict[str, float]:
    """p50 ms of the store-time checks at 1,000 and 10,000 memories (the bench corpus)."""
    settings = Settings(env_file=None)
    settings.storage.data_dir = data_dir
    system = build_system(settings, encoder=encoder)
    texts, probes = memory_texts(10_000), query_texts(200)
    vectors = encoder.encode(probes)
    where = VectorFilter(projects=(DEFAULT_PROJECT,))
    costs: dict[str, float] = {}
    try:
        for size in (1_000, 10_000):
            for start in range(system.records.memories.counts().total, size, 1_000):
                system.store_many(texts[start : start + 1_000], session_id=f"bulk-{start}")
            costs[f"novelty_search_{size}"] = _p50(
                lambda i: system.vectors.search(vectors[i], SIMILAR_LIMIT, where)
            )
            costs[f"same_text_{size}"] = _p50(
                lambda i: system.records.memories.find_same_text(probes[i], DEFAULT_PROJECT)
            )
        system.build_index()
        costs["novelty_search_10000_indexed"] = _p50(
            lambda i: system.vectors.search(vectors[i], SIMILAR_LIMIT, where)
        )
    finally:
        system.close()
    return costs


def _p50(call: Callable[[int], object], n: int = 200) -> float:
    samples = []
    for index in range(n):
        started = time.perf_counter()
        call(index)
        samples.append(time.perf_counter() - started)
    return round(statistics.median(samples) * 1000, 3)


def run(sample: int) -> dict[str, Any]:
    encoder = model_encoder(Settings(env_file=None))
    encoder.warm_up()
    with tempfile.TemporaryDirectory() as data_dir:
        cost = check_cost(encoder, Path(data_dir))
    return {
        "benchmark": "duplicates",
        "encoder": encoder.name,
        "locomo": measure(encoder, locomo_projects(), sample),
        "npm_readmes": measure(encoder, readme_projects(), sample),
        "check_cost_p50_ms": cost,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench duplicates")
    parser.add_argument("--sample", type=int, default=300, help="Memories edited per corpus.")
    results = run(parser.parse_args(argv).sample)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "duplicates.json").write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))  # noqa: T201  # the benchmark's report
