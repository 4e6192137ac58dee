"""A store built the way users build one, then used: recall time as memory grows and is used.

    python -m bench lived-in [--memories 10000] [--checkpoints 1000,5000,20000] [--window 500] [--keep DIR]
                             [--words fts5|index] [--again DIR]

1. ``memory_system serve mcp`` subprocesses store LoCoMo turns one by one over stdio through
   ``store_memory`` (with their speakers), a new server process every ``--session`` turns, so
   links in time form as they do in real sessions. The turns are taken in order and cycled, each
   pass marked, until ``--memories`` are stored.
2. One more server answers ``recall_memories`` for the LoCoMo questions, cycled, as many times as
   the last checkpoint says; every recall is timed. At each checkpoint the window of the last
   ``--window`` recalls gives p50/p95, with the number of co-recall links the store holds then.
3. The encoder's batch-1 p50 (the server's own backend, in this process) is measured before and
   after; the ratios use the median of all its samples, so they pair the two in one run. Each
   recall is also paired with this process's encoder embedding its cue just before it (as the
   suite pairs its calls): each checkpoint's ``_paired`` ratio divides the window's recall p50 by
   the p50 of the same window's embeddings, which cancels a load that moves during the run.

With ``--keep DIR`` the store is built in DIR (which must not hold one yet) and stays there, used,
for profiling afterwards. ``--again DIR`` measures steps 2 and 3 again on a copy of a store kept so
(the recalls change the store: links), without building one: a change to recall is measured on a
100,000-turn store in minutes instead of the hour its build takes (the report says
``"again": DIR``, has no store or build figures, and goes to ``lived-in-<memories>-again.json``).
``--words`` sets where the servers' recall searches the words (``COGNITIVE_MEMORY_WORDS``); without
it, recall's default.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from bench.latency import RESULTS, percentiles, progress, time_each
from bench.locomo import DEFAULT_DATA, questions, turns
from bench.stdio import StdioServer, words_env
from cognitive_memory.main import model_encoder
from cognitive_memory.settings import Settings

__all__ = ["cycled_turns", "main", "run"]

ENCODER_SAMPLES = 200
DATABASE = "cognitive_memory.db"


def cycled_turns(samples: Sequence[dict[str, Any]], count: int) -> Iterator[tuple[str, str]]:
    """``count`` (text, speaker) pairs: the turns in order, cycled, later passes marked."""
    produced, rounds = 0, 0
    while True:
        rounds += 1
        for sample in samples:
            for _, text, speaker in turns(sample["conversation"]):
                if produced == count:
                    return
                yield (text if rounds == 1 else f"{text} (pass {rounds})"), speaker
                produced += 1


def _build(
    data_dir: Path, samples: Sequence[dict[str, Any]], count: int, session: int, env: dict[str, str]
) -> list[float]:
    """Store ``count`` turns one by one, a new server (given ``env``) every ``session`` turns; the
    store times."""
    pending = list(cycled_turns(samples, count))
    times: list[float] = []
    for start in range(0, len(pending), session):
        _progress(f"stored {start} of {count}")
        server = StdioServer(data_dir, env)
        try:
            server.initialize()
            for text, speaker in pending[start : start + session]:
                started = time.perf_counter()
                server.call("store_memory", {"text": text, "context": {"speaker": speaker}})
                times.append(time.perf_counter() - started)
        finally:
            server.close()
    return times


def _co_recall_links(data_dir: Path) -> int:
    return _count(data_dir, "SELECT count(*) FROM connections WHERE kind = 'co_recall'") // 2  # both ways


def _memory_count(data_dir: Path) -> int:
    return _count(data_dir, "SELECT count(*) FROM memories")


def _count(data_dir: Path, sql: str) -> int:
    with sqlite3.connect(f"file:{data_dir / DATABASE}?mode=ro", uri=True) as conn:
        return int(conn.execute(sql).fetchone()[0])


def _index_state(server: StdioServer) -> dict[str, Any]:
    """How many vectors the HNSW index covers, and whether a background build runs."""
    status = server.call("memory_status", {"detailed": True})["structuredContent"]
    details = status["configuration"].get("vector_store_details", {})
    return {
        "vectors": status["storage_stats"]["vector_count"],
        "indexed": details.get("indexed_vectors"),
        "building": details.get("index_build_pid") is not None,
    }


def _use(
    data_dir: Path,
    cues: Sequence[str],
    checkpoints: Sequence[int],
    window: int,
    env: dict[str, str],
    embed: Callable[[str], object],
) -> list[dict[str, Any]]:
    """Recall the cues, cycled, up to the last checkpoint, each just after ``embed`` embeds it in
    this process; p50/p95 of the window before each checkpoint, recalls and embeddings."""
    server = StdioServer(data_dir, env)
    reports = []
    try:
        server.initialize()
        server.call("recall_memories", {"query": cues[0]})  # the first recall loads what it needs
        times: list[float] = []
        paired: list[float] = []
        for checkpoint in checkpoints:
            while len(times) < checkpoint:
                cue = cues[len(times) % len(cues)]
                paired += time_each(embed, [cue])
                started = time.perf_counter()
                server.call("recall_memories", {"query": cue})
                times.append(time.perf_counter() - started)
            links = _co_recall_links(data_dir)
            reports.append(
                {
                    "recalls": checkpoint,
                    "recall": percentiles(times[-window:]),
                    "encoder_batch1_paired": percentiles(paired[-window:]),
                    "co_recall_links": links,
                    "vector_index": _index_state(server),
                }
            )
            _progress(f"{checkpoint} recalls: {reports[-1]['recall']}, {links} co-recall links")
        reports.append({"rss": server.rss_mb()})
    finally:
        server.close()
    return reports


def run(
    data: Path,
    memories: int,
    checkpoints: Sequence[int],
    window: int,
    session: int,
    keep: Path | None = None,
    words: str | None = None,
    again: Path | None = None,
) -> dict[str, Any]:
    """Build the store (or copy the one kept in ``again``), use it, and report (see the module
    docstring); ``words``: fts5 or index for the servers' recall (None: its default)."""
    samples = json.loads(data.read_text())
    cues = [q.text for sample in samples for q in questions(sample)]
    settings = Settings(env_file=None)
    encoder = model_encoder(settings)
    encoder.warm_up()
    encoder_times = time_each(lambda text: encoder.encode([text]), cues[:ENCODER_SAMPLES])
    with tempfile.TemporaryDirectory(dir=None if again is None else again.parent) as tmp:
        data_dir = keep or Path(tmp) / "store"
        started = time.perf_counter()
        if again is None:
            data_dir.mkdir(parents=True, exist_ok=True)
            store_times = _build(data_dir, samples, memories, session, words_env(words))
        else:
            shutil.copytree(again, data_dir)
            store_times, memories = [], _memory_count(data_dir)
        build_seconds = time.perf_counter() - started
        use = _use(data_dir, cues, checkpoints, window, words_env(words), lambda text: encoder.encode([text]))
    encoder_times += time_each(lambda text: encoder.encode([text]), cues[-ENCODER_SAMPLES:])
    encoder_p50 = percentiles(encoder_times)["p50_ms"]
    store = percentiles(store_times) if store_times else None
    rss = use.pop()["rss"]
    for report in use:
        report["recall_p50_over_encoder"] = round(report["recall"]["p50_ms"] / encoder_p50, 2)
        report["recall_p95_over_encoder"] = round(report["recall"]["p95_ms"] / encoder_p50, 2)
        paired_p50 = report["encoder_batch1_paired"]["p50_ms"]
        report["recall_p50_over_encoder_paired"] = round(report["recall"]["p50_ms"] / paired_p50, 2)
        report["recall_p95_over_encoder_paired"] = round(report["recall"]["p95_ms"] / paired_p50, 2)
    return {
        "benchmark": "lived-in",
        "encoder_backend": settings.encoder.backend,
        "words": words or "default",
        "memories": memories,
        **({"again": str(again)} if again is not None else {"build_seconds": round(build_seconds, 1)}),
        "encoder_batch1": percentiles(encoder_times),
        "store": store,
        "store_p50_over_encoder": round(store["p50_ms"] / encoder_p50, 2) if store else None,
        "checkpoints": use,
        **(rss or {}),
    }


_progress = partial(progress, "lived-in")


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m bench lived-in``: run, write bench/results/lived-in-<memories>.json, print it."""
    parser = argparse.ArgumentParser(prog="python -m bench lived-in", description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--checkpoints", default="1000,5000,20000", help="recall counts to report at")
    parser.add_argument("--window", type=int, default=500, help="recalls each checkpoint's numbers cover")
    parser.add_argument("--session", type=int, default=250, help="stores per server process")
    parser.add_argument("--keep", type=Path, help="build the store in DIR (new or empty) and leave it there")
    parser.add_argument(
        "--words", choices=("fts5", "index"), help="where recall searches words (default: recall's own)"
    )
    parser.add_argument("--again", type=Path, help="recall on a copy of the store kept in DIR: no build")
    args = parser.parse_args(argv)
    try:
        checkpoints = sorted(int(part) for part in args.checkpoints.split(",") if part.strip())
    except ValueError:
        parser.error(f"--checkpoints takes comma-separated whole numbers, not {args.checkpoints!r}")
    if not checkpoints or min(checkpoints) < 1 or args.memories < 1 or args.window < 1 or args.session < 1:
        parser.error("--memories, --window, --session and every checkpoint must be at least 1")
    if args.keep is not None and args.keep.exists() and any(args.keep.iterdir()):
        parser.error(f"--keep {args.keep} is not empty: a lived-in store is built from nothing")
    if args.again is not None and (args.keep is not None or not (args.again / DATABASE).is_file()):
        parser.error(f"--again takes a store kept by --keep (no {DATABASE} in {args.again}), without --keep")
    result = run(
        args.data, args.memories, checkpoints, args.window, args.session, args.keep, args.words, args.again
    )
    RESULTS.mkdir(exist_ok=True)
    name = f"lived-in-{result['memories']}{'-again' if args.again else ''}.json"
    (RESULTS / name).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))  # noqa: T201 - the benchmark's report goes to stdout
