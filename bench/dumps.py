"""Ranking dumps: what a refactor of recall must leave unchanged.

    python -m bench locomo --dump before.jsonl      (and python -m bench notes --dump ...)
    ... change the code ...
    python -m bench locomo --dump after.jsonl
    python -m bench compare-dumps before.jsonl after.jsonl [--tolerance 1e-6]

A dump has one JSON line per question, in the benchmark's fixed order: the question's key, the
ranked memories as [key, score] pairs (best first, score rounded to SCORE_DECIMALS) and, for
recall, how many of them are core. Memories are keyed by something the data gives (a LoCoMo
dia_id, a README's path and section), never by their random ids. A benchmark writing a dump runs
on a fixed clock, draws memory ids from a seeded generator and waits for each recall's bookkeeping
(access counts, co-recall links) before the next question, so two runs of the same code give the
same file. The ids matter: where links tie (the co-recall links one recall strengthens share their
time and weight, and a memory keeps only its most recent ones), SQLite's order falls back on them,
so with random ids a few rankings (6 of conv-42's 199 questions) differed between two runs.

compare-dumps prints how many questions differ and the first few differences; exit 1 if any.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import sys
import uuid
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cognitive_memory.service import BriefMemoryOut, MemoryOut

__all__ = [
    "FIXED_NOW",
    "SCORE_DECIMALS",
    "compare",
    "fixed_clock",
    "main",
    "question_line",
    "recall_score",
    "repeatable_ids",
    "write",
]

SCORE_DECIMALS = 6
FIXED_NOW = datetime(2026, 1, 1, tzinfo=UTC)
SHOWN = 5


def fixed_clock() -> datetime:
    """The clock of a dumping benchmark: every store and recall happens at FIXED_NOW."""
    return FIXED_NOW


@contextlib.contextmanager
def repeatable_ids(seed: int = 28) -> Iterator[None]:
    """``uuid.uuid4`` from a generator seeded with ``seed`` meanwhile: the same calls in the same
    order give the same memory ids, run after run (a change that adds or drops a call to it shifts
    the ids, and may show as a difference where two links tie)."""
    generator = random.Random(seed)
    real = uuid.uuid4
    uuid.uuid4 = lambda: uuid.UUID(int=generator.getrandbits(128), version=4)  # the stdlib's, restored below
    try:
        yield
    finally:
        uuid.uuid4 = real


def recall_score(memory: BriefMemoryOut | MemoryOut) -> float:
    """The total score recall ranked ``memory`` by (brief answers give it alone)."""
    if isinstance(memory.score, float):
        return memory.score
    return memory.score.total if memory.score is not None else 0.0


def question_line(key: str, ranked: Iterable[tuple[str, float]], **extra: Any) -> dict[str, Any]:
    """One question's line: its key, the ranked [memory key, rounded score] pairs, then ``extra``."""
    return {
        "question": key,
        "ranked": [[memory, round(score, SCORE_DECIMALS)] for memory, score in ranked],
        **extra,
    }


def write(path: Path, lines: Iterable[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines))


def _read(path: Path) -> dict[str, dict[str, Any]]:
    lines = [json.loads(text) for text in path.read_text().splitlines() if text.strip()]
    return {line["question"]: line for line in lines}


def _difference(a: dict[str, Any], b: dict[str, Any], tolerance: float) -> str | None:
    """What differs between two lines of one question, or None."""
    keys_a, keys_b = [m for m, _ in a["ranked"]], [m for m, _ in b["ranked"]]
    if keys_a != keys_b:
        first = next((i for i, (x, y) in enumerate(zip(keys_a, keys_b, strict=False)) if x != y), None)
        at = first if first is not None else min(len(keys_a), len(keys_b))
        return f"ranking differs from rank {at + 1}: {keys_a[at : at + 3]} vs {keys_b[at : at + 3]}"
    for rank, ((memory, x), (_, y)) in enumerate(zip(a["ranked"], b["ranked"], strict=True), start=1):
        if abs(x - y) > tolerance:
            return f"score of {memory} (rank {rank}) differs: {x} vs {y}"
    others = {k: (a[k], b.get(k)) for k in a if k not in ("question", "ranked") and a[k] != b.get(k)}
    return f"differs in {others}" if others else None


def compare(before: Path, after: Path, tolerance: float = 0.0) -> list[str]:
    """One line per question that differs (missing on one side, other ranking or scores), in
    the order of ``before``."""
    a, b = _read(before), _read(after)
    differences = []
    for key, line in a.items():
        found = f"only in {before}" if key not in b else _difference(line, b[key], tolerance)
        if found:
            differences.append(f"{key}: {found}")
    return differences + [f"{key}: only in {after}" for key in b if key not in a]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench compare-dumps", description=__doc__)
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--tolerance", type=float, default=0.0, help="largest score change ignored")
    args = parser.parse_args(argv)
    differences = compare(args.before, args.after, args.tolerance)
    total = len(_read(args.before).keys() | _read(args.after).keys())
    print(f"{len(differences)} of {total} questions differ")  # noqa: T201 - the tool's report
    for line in differences[:SHOWN]:
        print(f"  {line}")  # noqa: T201
    if differences:
        sys.exit(1)
