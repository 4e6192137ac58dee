"""What the typo repairs (``core/spelling.repairs``) cost a recall: paired, on one conversation.

    python -m bench repairs [--conversation N] [--rounds R]

Stores the turns of LoCoMo conversation N (the hash encoder: the encoder is not what this bench
measures) and asks each of its questions spelt as the data has them and misspelt
(bench/misspell.py), with the repairs on and off (``storage/corrections`` told that no word is
repairable), the two alternated call by call so the machine's load drifts alike for both. Times
the query's corrected terms alone (``Words.query_terms``) and a whole recall without its
embedding (``Retriever.retrieve`` with the query's vector made beforehand). Prints the p50 of each.
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

from bench.dumps import FIXED_NOW
from bench.locomo import DEFAULT_DATA, questions, turns
from bench.misspell import misspell
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from cognitive_memory.storage import corrections
from cognitive_memory.system import CognitiveSystem

__all__ = ["main", "run"]


def _timed(system: CognitiveSystem, query: str, repairs: bool) -> tuple[float, float]:
    """(the corrected terms' seconds, the recall's seconds) of ``query``, the repairs on or off."""
    real = corrections.repairable
    if not repairs:
        corrections.repairable = lambda word: False  # the repairs off: no typed word is repairable
    try:
        started = time.perf_counter()
        system.records.words.query_terms(query)
        terms = time.perf_counter() - started
        vector = system.encoder.encode([query])[0]
        started = time.perf_counter()
        system.retriever.retrieve(query, vector, max_results=10, include_bridges=False, now=FIXED_NOW)
        return terms, time.perf_counter() - started
    finally:
        corrections.repairable = real


def run(conversation: int, rounds: int) -> dict[str, Any]:
    """Time every question of ``conversation``, spelt and misspelt, ``rounds`` times each way."""
    sample = json.loads(DEFAULT_DATA.read_text())[conversation]
    asked = [question.text for question in questions(sample)]
    kinds = {"spelt": asked, "misspelt": [misspell(text) for text in asked]}
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as directory:
        settings = Settings(env_file=None)
        settings.storage.data_dir = Path(directory)
        system = build_system(settings, encoder=HashEncoder())
        try:
            texts = [text for _, text, _ in turns(sample["conversation"])]
            for start in range(0, len(texts), 500):
                system.store_many(texts[start : start + 500])
            for round_ in range(rounds):
                for kind, queries in kinds.items():
                    for query in queries:
                        for repairs in (False, True) if round_ % 2 == 0 else (True, False):
                            terms, recall = _timed(system, query, repairs)
                            name = f"{kind}_repairs_{'on' if repairs else 'off'}"
                            times.setdefault(f"{name}_terms", []).append(terms)
                            times.setdefault(f"{name}_recall", []).append(recall)
        finally:
            system.close()
    p50 = {f"{name}_p50_ms": round(statistics.median(v) * 1000, 3) for name, v in sorted(times.items())}
    return {"benchmark": "repairs", "conversation": sample["sample_id"], "questions": len(asked), **p50}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench repairs", description=__doc__)
    parser.add_argument("--conversation", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print(json.dumps(run(args.conversation, args.rounds), indent=2))  # noqa: T201 - the report goes to stdout
