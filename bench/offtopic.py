"""Off-topic questions: how often recall answers when there is nothing to find.

    python -m bench offtopic [--data PATH]

Conversations: each LoCoMo conversation is stored (as transcript turns, one store each) and asked
the questions of the next one, which are about other people and other events. Notes: the npm
READMEs are loaded and asked the questions of the first LoCoMo conversation. Reports the share of
questions that get any memory and any core memory (max_results 10, bridges off). Results go to
``bench/results/offtopic.json``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import locomo
from bench.latency import RESULTS
from bench.notes import DATA as NOTES
from cognitive_memory.encoding import Encoder
from cognitive_memory.main import build_system, model_encoder
from cognitive_memory.service import MemoryService
from cognitive_memory.settings import Settings

__all__ = ["main", "run"]


def _ask(service: MemoryService, asked: Sequence[str]) -> tuple[int, int, int]:
    """(questions, with any memory, with any core memory)."""
    anything = core = 0
    for question in asked:
        result = service.retrieve_memories(question, ["core", "peripheral"], 10, False)
        anything += result.total_results > 0
        core += bool(result.memories.core)
    return len(asked), anything, core


def _store(encoder: Encoder, root: Path, name: str) -> tuple[Any, MemoryService]:
    settings = Settings(env_file=None)
    settings.storage.data_dir = root / name
    system = build_system(settings, encoder=encoder)
    return system, MemoryService(system, session_id=name)


def _share(counts: tuple[int, int, int]) -> dict[str, float]:
    asked, anything, core = counts
    return {"questions": asked, "any_memory": round(anything / asked, 3), "any_core": round(core / asked, 3)}


def run(data: Path, notes: Path) -> dict[str, Any]:
    samples = json.loads(data.read_text())
    encoder = model_encoder(Settings(env_file=None))
    encoder.warm_up()
    totals = [0, 0, 0]
    per_pair = {}
    with tempfile.TemporaryDirectory() as tmp:
        for index, sample in enumerate(samples):
            other = samples[(index + 1) % len(samples)]
            system, service = _store(encoder, Path(tmp), sample["sample_id"])
            try:
                locomo.store_conversation(service, sample)
                counts = _ask(service, [q.text for q in locomo.questions(other)])
            finally:
                system.close()
            per_pair[f"{other['sample_id']} -> {sample['sample_id']}"] = _share(counts)
            totals = [a + b for a, b in zip(totals, counts, strict=True)]
        system, service = _store(encoder, Path(tmp), "notes")
        try:
            service.load_markdown(str(notes / "readmes"))
            notes_counts = _ask(service, [q.text for q in locomo.questions(samples[0])])
        finally:
            system.close()
    return {
        "benchmark": "offtopic",
        "conversations": _share((totals[0], totals[1], totals[2])),
        "pairs": per_pair,
        "notes": _share(notes_counts),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench offtopic", description=__doc__)
    parser.add_argument("--data", type=Path, default=locomo.DEFAULT_DATA)
    parser.add_argument("--notes", type=Path, default=NOTES)
    args = parser.parse_args(argv)
    result = run(args.data, args.notes)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "offtopic.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))  # noqa: T201 - the benchmark's report goes to stdout
