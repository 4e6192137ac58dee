"""Start-up alone: a real ``memory_system serve mcp`` over stdio, started again and again.

python -m bench first-recall [--memories 10000] [--runs 5] [--keep DIR] [--against TREE ...]

The store is built as ``bench suite`` builds it (``--keep DIR`` keeps it in ``DIR/n<count>``, the
suite's layout, and a later run of either reuses it). Then ``--runs`` servers start one after
another on it; each is timed from process start to ``initialize`` answered, to ``tools/list``
answered (sent right after), to its first ``recall_memories`` answered, and from its stdin closed
to its exit. Between servers this process embeds 20 queries one at a time with the configured
encoder: its batch-1 time in the same run, for the ratio. ``--against TREE`` (repeatable) starts,
in every round, a server whose code comes from the source tree TREE (``PYTHONPATH``) beside this
one's, the order turned round each round: old and new code on the same store, under the same load
(results under ``against`` for one TREE, under each TREE's path for several). Each tree's server starts once
untimed before the timed runs, so every timed server starts after another ended, as a client's
next session does (the store's files in the page cache, the modules' bytecode written: servers run
with ``PYTHONDONTWRITEBYTECODE`` unset). Results: ``bench/results/first-recall-<memories>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from bench.corpus import memory_texts, query_texts
from bench.latency import RESULTS, fill, percentiles, progress, time_each
from bench.stdio import StdioServer
from cognitive_memory.encoding import Encoder
from cognitive_memory.main import build_system, model_encoder
from cognitive_memory.settings import Settings

__all__ = ["main", "measure"]

PAIRED = 20  # queries the bench embeds alone after each server
STEPS = ("initialize_s", "tools_list_s", "first_recall_s", "exit_after_eof_s")


def measure(count: int, runs: int, keep: Path | None, against: Sequence[Path] = ()) -> dict[str, Any]:
    """Build (or reuse) the store, then ``runs`` rounds of servers; the medians and spreads."""
    settings = Settings(env_file=None)
    encoder = model_encoder(settings)
    encoder.warm_up()
    cues = query_texts(runs + PAIRED, seed=13)
    others = {"against": str(against[0])} if len(against) == 1 else {str(tree): str(tree) for tree in against}
    trees = {"this": os.environ.get("PYTHONPATH", "")} | others
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = (keep or Path(tmp)) / f"n{count}"
        memories, reused = _store(settings, encoder, data_dir, count)
        samples: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        encodings: list[float] = []
        for name in trees:  # untimed: bytecode written, the store's files in the page cache
            _progress(f"a first start, untimed: {name}")
            _started(data_dir, cues[0], _environment(trees[name]))
        for run in range(runs):
            order = list(trees) if run % 2 == 0 else list(reversed(trees))
            for name in order:
                _progress(f"run {run + 1} of {runs}: {name}")
                samples[name].append(_started(data_dir, cues[run], _environment(trees[name])))
                encodings += time_each(lambda text: encoder.encode([text]), cues[runs:])
    encoder_p50 = percentiles(encodings)
    return {
        "benchmark": "first-recall",
        "memories": memories,
        "reused_store": reused,
        "runs": runs,
        "encoder_backend": settings.encoder.backend,
        "encoder_batch1": encoder_p50,
        **{name: _summary(rows, encoder_p50["p50_ms"]) for name, rows in samples.items()},
        **({"against_trees": [str(tree) for tree in against]} if against else {}),
    }


def _store(settings: Settings, encoder: Encoder, data_dir: Path, count: int) -> tuple[int, bool]:
    """The store of ``count`` memories, built in bulk unless it is there already."""
    settings.storage.data_dir = data_dir
    system = build_system(settings, encoder=encoder, open_index_later=True)
    try:
        reused = fill(system, encoder, memory_texts(count))[0]
        return system.records.memories.counts().total, reused
    finally:
        system.close()


def _environment(tree: str) -> dict[str, str]:
    """A server's variables beyond this process's: its code's tree, and its bytecode cached as an
    installed package's is (``PYTHONDONTWRITEBYTECODE`` would have it compile every module again
    at every start)."""
    return {"PYTHONPATH": tree, "PYTHONDONTWRITEBYTECODE": ""}


def _started(data_dir: Path, cue: str, env: dict[str, str]) -> dict[str, float]:
    """One server's start-up, in seconds from its process start (its exit: from its stdin closed)."""
    server = StdioServer(data_dir, env)
    try:
        server.initialize()
        initialized = time.perf_counter() - server.started
        server.request("tools/list", {})
        listed = time.perf_counter() - server.started
        server.call("recall_memories", {"query": cue})
        recalled = time.perf_counter() - server.started
    except BaseException:
        server.process.kill()
        raise
    closing = time.perf_counter()
    server.close()
    ended = time.perf_counter() - closing
    return dict(zip(STEPS, (initialized, listed, recalled, ended), strict=True))


def _summary(rows: Sequence[dict[str, float]], encoder_ms: float) -> dict[str, Any]:
    """Each step's median and range over the runs, every run's figures, and the first recall's
    median against the encoder's batch-1 p50."""
    steps = {
        step: {
            "median": round(statistics.median(row[step] for row in rows), 3),
            "min": round(min(row[step] for row in rows), 3),
            "max": round(max(row[step] for row in rows), 3),
        }
        for step in STEPS
    }
    first = steps["first_recall_s"]["median"] * 1000
    return {
        **steps,
        "first_recall_over_encoder": round(first / encoder_ms, 1),
        "each_run": [{step: round(row[step], 3) for step in STEPS} for row in rows],
    }


_progress = partial(progress, "first-recall")


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m bench first-recall``: measure, write bench/results/first-recall-<memories>.json."""
    parser = argparse.ArgumentParser(prog="python -m bench first-recall", description=__doc__)
    parser.add_argument("--memories", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=5, help="servers started (each tree, with --against)")
    parser.add_argument(
        "--keep", type=Path, help="keep the store in DIR/n<count> (as bench suite does); one there is reused"
    )
    parser.add_argument(
        "--against",
        type=Path,
        action="append",
        default=[],
        help="a source tree whose server starts in turn with this one's (PYTHONPATH); repeatable",
    )
    args = parser.parse_args(argv)
    if args.memories < 1 or args.runs < 1:
        parser.error("--memories and --runs must be at least 1")
    for tree in args.against:
        if not (tree / "cognitive_memory").is_dir():
            parser.error(f"--against takes a source tree holding cognitive_memory/, not {tree}")
    result = measure(args.memories, args.runs, args.keep, args.against)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"first-recall-{args.memories}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))  # noqa: T201 - the benchmark's report goes to stdout
