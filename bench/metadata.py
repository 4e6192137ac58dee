"""What filters.metadata costs and whether it finds what ranks below the limit (docs/recall.md,
"Filters on your own fields").

python -m bench metadata [--memories 10000] [--queries 100]

Stores ``--memories`` notes in batches (the hash encoder: the filter, not the model, is what is
timed), then gives each, in one SQL transaction (migration 0020's triggers fill
``memory_fields`` as a store would), its own fields ``team`` (one of 10), ``ticket`` (one of
1,000) and ``reviewed`` (half of them). Then, for ``--queries`` queries, it times recall (10
results) unfiltered and filtered by each field, and list_memories' first page by each (no tag
filter: tags set by SQL would not reach the vector index's payload, which a tag filter
searches). For each filter: the median and p95 milliseconds, how many results recall returned,
whether every result matched, and how many of them an unfiltered recall of 50 did not return
(found below the limit).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from bench.corpus import memory_texts, query_texts
from bench.latency import RESULTS
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.main import build_system
from cognitive_memory.service import RecallFilters
from cognitive_memory.service.browse import list_page
from cognitive_memory.service.recall import recall
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem

__all__ = ["main", "run"]

BATCH = 500
FILTERS: dict[str, dict[str, Any]] = {
    "none": {},
    "metadata team (10%)": {"metadata": {"team": "t3"}},
    "metadata ticket (0.1%)": {"metadata": {"ticket": 7}},
    "metadata reviewed (50%)": {"metadata": {"reviewed": True}},
}


def fields(number: int) -> dict[str, Any]:
    return {"team": f"t{number % 10}", "ticket": number % 1000, "reviewed": number % 2 == 0}


def run(memories: int, queries: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(dir="/var/tmp") as folder:
        settings = Settings(env_file=None)
        settings.storage.data_dir = Path(folder)
        system = build_system(settings, encoder=HashEncoder())
        texts = memory_texts(memories, seed=5)
        started = time.perf_counter()
        for start in range(0, len(texts), BATCH):
            system.store_many(texts[start : start + BATCH], session_id="bench")
        system.flush()
        stored_s = time.perf_counter() - started
        database = system.records.path
        system.close()
        _label(database)
        system = build_system(settings, encoder=HashEncoder())
        try:
            asked = query_texts(queries, seed=6)
            report = {name: _filtered(system, asked, given) for name, given in FILTERS.items()}
        finally:
            system.close()
    return {"memories": memories, "queries": queries, "store_s": round(stored_s, 1), "filters": report}


def _label(database: Path) -> None:
    """Each memory's fields, in insertion order."""
    with closing(sqlite3.connect(database)) as conn, conn:
        ids = [row[0] for row in conn.execute("SELECT id FROM memories ORDER BY rowid")]
        conn.executemany(
            "UPDATE memories SET metadata = ? WHERE id = ?",
            [(json.dumps(fields(n)), i) for n, i in enumerate(ids)],
        )


def _filtered(system: CognitiveSystem, asked: Sequence[str], given: dict[str, Any]) -> dict[str, Any]:
    filters = RecallFilters(**given)
    times, counts, below, matched = [], [], 0, True
    for query in asked:
        started = time.perf_counter()
        found = _recalled(system, query, 10, filters)
        times.append(time.perf_counter() - started)
        counts.append(len(found))
        matched &= all(_matches(memory, given) for memory in found)
        if given:
            unfiltered = {m["id"] for m in _recalled(system, query, 50, None)}
            below += sum(memory["id"] not in unfiltered for memory in found)
    listed = _timed(lambda: list_page(system, filters, "created", 20, None, project="default"))
    return {
        "recall_ms_p50": round(1000 * statistics.median(times), 2),
        "recall_ms_p95": round(1000 * sorted(times)[int(0.95 * (len(times) - 1))], 2),
        "results_min": min(counts),
        "results_mean": round(statistics.mean(counts), 2),
        "all_match": matched,
        "found_below_unfiltered_top_50": below,
        "list_first_page_ms_p50": round(1000 * listed, 2),
    }


def _recalled(system: CognitiveSystem, query: str, limit: int, filters: RecallFilters | None) -> list[Any]:
    result = recall(system, query, None, limit, False, filters, project="default", detail="full")
    lists = result.model_dump()["memories"]
    return [*lists["core"], *lists["peripheral"]]


def _matches(memory: dict[str, Any], given: dict[str, Any]) -> bool:
    own = memory["metadata"]
    return all(own.get(name) == value for name, value in given.get("metadata", {}).items())


def _timed(call: Callable[[], object], repeats: int = 20) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv: Sequence[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench metadata", description=__doc__)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args(argv)
    result = run(args.memories, args.queries)
    print(json.dumps(result, indent=2))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "metadata.json").write_text(json.dumps(result, indent=2) + "\n")
