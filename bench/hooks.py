"""The Claude Code prompt hook as Claude Code runs it: `memory_system hook user-prompt-submit`, a
whole process from start to exit, on a store of 10,000 memories (docs/claude-code.md).

    python -m bench hooks [--memories 10000] [--runs 100] [--cold-runs 5]

1. Fill a fresh data directory: LoCoMo dialogue turns (when the data set is there) and the
   corpus' software notes, up to ``--memories``, with the configured encoder.
2. Fast path: start a real `memory_system serve mcp` (stdio, kept open), warm it with a few
   hooks, then time ``--runs`` hook processes with LoCoMo questions and software prompts;
   p50/p95 against the targets (150 / 300 ms).
3. Cold path: stop the server, time ``--cold-runs`` hook processes that open the memory
   themselves (prompt and session start).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from bench.corpus import memory_texts, query_texts
from bench.latency import RESULTS, percentiles, progress
from bench.stdio import MEMORY_SYSTEM, StdioServer
from cognitive_memory.main import build_system, model_encoder
from cognitive_memory.settings import Settings

__all__ = ["TARGETS_MS", "main", "run"]

TARGETS_MS = {"p50_ms": 150.0, "p95_ms": 300.0}
WARM_UP = 5
CHUNK = 1000
LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo_dev.json"


def _locomo() -> tuple[list[str], list[str]]:
    """LoCoMo's dialogue turns and questions (none when the data set is not there)."""
    if not LOCOMO.is_file():
        return [], []
    samples = json.loads(LOCOMO.read_text())
    turns, questions = [], []
    for sample in samples:
        conversation, session = sample["conversation"], 1
        while f"session_{session}" in conversation:
            date = conversation[f"session_{session}_date_time"]
            turns += [f"[{date}] {t['speaker']}: {t['text']}" for t in conversation[f"session_{session}"]]
            session += 1
        questions += [qa["question"] for qa in sample["qa"] if qa.get("question")]
    return turns, questions


def _fill(data_dir: Path, count: int, turns: Sequence[str]) -> int:
    settings = Settings(env_file=None)
    settings.storage.data_dir = data_dir
    system = build_system(settings, encoder=model_encoder(settings))
    texts = [*turns[:count], *memory_texts(max(0, count - len(turns)))]
    try:
        for offset in range(0, len(texts), CHUNK):
            system.store_many(texts[offset : offset + CHUNK])
        system.build_index()
        return system.records.memories.counts().total
    finally:
        system.close()


def _hook(data_dir: Path, event: str, payload: dict[str, Any]) -> tuple[float, str]:
    """One hook process, start to exit: (seconds, its stdout)."""
    env = {
        **os.environ,
        "COGNITIVE_MEMORY_DATA_DIR": str(data_dir),
        "COGNITIVE_MEMORY_PROJECT": "default",  # where store_many put the memories
    }
    started = time.perf_counter()
    done = subprocess.run(
        [str(MEMORY_SYSTEM), "hook", event],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        cwd=str(data_dir),
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0 or done.stderr.strip():
        _progress(f"hook {event}: status {done.returncode}, stderr {done.stderr.strip()!r}")
    return elapsed, done.stdout


def _prompt(text: str, data_dir: Path) -> dict[str, Any]:
    return {
        "hook_event_name": "UserPromptSubmit",
        "session_id": "bench",
        "transcript_path": str(data_dir / "transcript.jsonl"),
        "cwd": str(data_dir),
        "prompt": text,
    }


def _timed_prompts(data_dir: Path, prompts: Sequence[str]) -> dict[str, Any]:
    samples, answered = [], 0
    for text in prompts:
        elapsed, stdout = _hook(data_dir, "user-prompt-submit", _prompt(text, data_dir))
        samples.append(elapsed)
        answered += bool(stdout.strip())
    return {**percentiles(samples), "with_context": answered}


def run(count: int, runs: int, cold_runs: int) -> dict[str, Any]:
    """Measure; returns the JSON-ready results."""
    turns, questions = _locomo()
    mixed = [p for pair in zip(questions, query_texts(runs), strict=False) for p in pair]
    prompts = (mixed or query_texts(runs))[:runs]
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        _progress(f"storing {count} memories")
        stored = _fill(data_dir, count, turns)
        _progress("fast path: memory_system serve mcp over stdio")
        server = StdioServer(data_dir)
        try:
            server.initialize()
            _timed_prompts(data_dir, query_texts(WARM_UP, seed=5))
            fast = _timed_prompts(data_dir, prompts)
        finally:
            server.close()
        _progress("cold path: no server")
        cold = _timed_prompts(data_dir, prompts[:cold_runs])
        start = {"hook_event_name": "SessionStart", "cwd": str(data_dir), "session_id": "bench"}
        cold_start = percentiles([_hook(data_dir, "session-start", start)[0] for _ in range(cold_runs)])
    return {
        "benchmark": "hooks",
        "memories": stored,
        "locomo_turns": min(len(turns), count),
        "cpus": os.cpu_count(),
        "targets": TARGETS_MS,
        "fast_path_user_prompt_submit": fast,
        "meets_targets": all(fast[key] < limit for key, limit in TARGETS_MS.items()),
        "cold_path_user_prompt_submit": cold,
        "cold_path_session_start": cold_start,
    }


_progress = partial(progress, "hooks")


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m bench hooks``: run, write bench/results/hooks-<memories>.json, print it."""
    parser = argparse.ArgumentParser(prog="python -m bench hooks", description=__doc__)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=100, help="timed hook processes with a server")
    parser.add_argument("--cold-runs", type=int, default=5, help="timed hook processes without one")
    args = parser.parse_args(argv)
    result = run(args.memories, args.runs, args.cold_runs)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"hooks-{args.memories}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))  # noqa: T201 - the benchmark's report goes to stdout
