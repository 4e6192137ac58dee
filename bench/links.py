"""Recall reading the store against recall reading the state kept in memory, on a copy of a kept
store.

    python -m bench links --store DIR [--questions 400]

DIR is a store kept by ``python -m bench lived-in --keep DIR`` or ``python -m bench suite --keep
DIR`` (it is copied, never changed). In one process: the links are read into memory
(``replicas.FollowedLinks``), then the ranking rows and vectors (``replicas.FollowedRanking``),
each build timed with the resident memory it added (``rss``: the process's resident set before and
after, a coarse figure) and the bytes its table holds; then the LoCoMo questions (their vectors
embedded first) are recalled twice over through four retrievers: ``store`` (everything from the
store), ``links`` (the links from memory), ``memory`` (the links and the ranking rows from
memory) and ``at_hand`` (those, and the query's word counts and filter, ``replicas.FollowedWords``:
the search before any read of the store, as a server recalls), interleaved per question, their
order reversed in the second pass; no bookkeeping is written, so all rank on the same store
(``at_hand_share``: the share of the questions weighed from memory at the end). Then the links and
the ranking rows of 100 random memories are read both ways, 300 times. Results:
``bench/results/links-<memories>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.latency import RESULTS
from bench.locomo import DEFAULT_DATA, questions
from cognitive_memory.encoding import Encoder
from cognitive_memory.main import build_system
from cognitive_memory.replicas import FollowedLinks, FollowedRanking, FollowedTable, FollowedWords
from cognitive_memory.retrieval import Retriever
from cognitive_memory.settings import Settings

__all__ = ["main", "run"]


def run(store: Path, count: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(dir="/var/tmp") as folder:
        copy = Path(folder) / "store"
        shutil.copytree(store, copy)
        settings = Settings(env_file=None)
        settings.storage.data_dir = copy
        system = build_system(settings)
        try:
            system.encoder.warm_up()
            links = FollowedLinks(system.records)
            ranking = FollowedRanking(system.records, system.encoder.dimension)
            words = FollowedWords(system.records)
            built = {"links": _build(links), "ranking": _build(ranking), "words": _build(words)}
            built["ranking"]["table_bytes"] = ranking.bytes_held()
            base = system.retriever
            ways = {
                "store": base,
                "links": Retriever(system.records, system.vectors, base.config, base.coverage, links=links),
                "memory": Retriever(
                    system.records, system.vectors, base.config, base.coverage, links=links, ranking=ranking
                ),
                "at_hand": Retriever(
                    system.records,
                    system.vectors,
                    base.config,
                    base.coverage,
                    links=links,
                    ranking=ranking,
                    at_hand=(ranking, words),
                ),
            }
            recall = _recalls(system.encoder, ways, count)
            recall["at_hand_share"] = round(_at_hand_share(words, count), 3)
            ids = [m.id for batch in system.records.memories.batches() for m in batch]
            reads = {
                "links_of_100": _reads(system.records.links.neighbourhood, links.neighbourhood, ids),
                "ranking_rows_of_100": _reads(
                    system.records.memories.ranking_rows, ranking.ranking_rows, ids
                ),
            }
            memories = len(ids)
        finally:
            system.close()
    return {"benchmark": "links", "memories": memories, "built": built, **recall, **reads}


def _build(table: FollowedTable[Any]) -> dict[str, Any]:
    """Build ``table``: the seconds it took and the resident memory it added (MB)."""
    before = _rss_mb()
    started = time.perf_counter()
    table.build()
    seconds = time.perf_counter() - started
    return {"build_s": round(seconds, 3), "rss_added_mb": round(_rss_mb() - before, 1)}


def _cues(count: int) -> list[str]:
    samples = json.loads(DEFAULT_DATA.read_text())
    return [question.text for sample in samples for question in questions(sample)][:count]


def _at_hand_share(words: FollowedWords, count: int) -> float:
    """The share of the questions whose query the word counts kept in memory weigh, at the end."""
    cues = _cues(count)
    return sum(words.at_hand(cue) is not None for cue in cues) / len(cues)


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _recalls(encoder: Encoder, ways: dict[str, Retriever], count: int) -> dict[str, Any]:
    """Recall p50 and p95 each way (the first 50 of each left out: warming up)."""
    cues = _cues(count)
    vectors = encoder.encode(cues)
    now = datetime.now(UTC)
    timed: dict[str, list[float]] = {name: [] for name in ways}
    order = list(ways.items())
    for turn in range(2):
        for cue, vector in zip(cues, vectors, strict=True):
            for name, way in order if turn == 0 else order[::-1]:
                started = time.perf_counter()
                way.retrieve(cue, vector, max_results=10, include_bridges=True, now=now)
                timed[name].append(1000 * (time.perf_counter() - started))
    report: dict[str, Any] = {"questions": len(cues)}
    for name, times in timed.items():
        kept = sorted(times[50:])
        report[f"recall_{name}_p50_ms"] = round(statistics.median(kept), 2)
        report[f"recall_{name}_p95_ms"] = round(kept[int(0.95 * len(kept))], 2)
    return report


def _reads(
    from_store: Callable[[Sequence[str]], object],
    from_memory: Callable[[Sequence[str]], object],
    ids: list[str],
) -> dict[str, Any]:
    rng = random.Random(2)
    sets = [rng.sample(ids, min(100, len(ids))) for _ in range(300)]
    timed: dict[str, list[float]] = {"store": [], "memory": []}
    for _ in range(2):
        for name, read in (("store", from_store), ("memory", from_memory)):
            started = time.perf_counter()
            for chosen in sets:
                read(chosen)
            timed[name].append(1000 * (time.perf_counter() - started) / len(sets))
    return {f"{name}_ms": [round(t, 3) for t in times] for name, times in timed.items()}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench links", description=__doc__)
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--questions", type=int, default=400)
    args = parser.parse_args(argv)
    result = run(args.store, args.questions)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"links-{result['memories']}.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))  # noqa: T201 - the benchmark's report goes to stdout
