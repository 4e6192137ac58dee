"""LoCoMo evidence retrieval through MemoryService: recall@5, recall@10 and MRR per category.

    python -m bench locomo [--data PATH] [--conversations N] [--dump FILE] [--misspell] [--words index|fts5]

Each dialogue turn is stored as ``[session date] Speaker: text`` (plus `` [image: caption]``),
a fresh store per conversation; every question of categories 1-4 with evidence is asked, and the
core + peripheral list (rank order, max_results 10) is scored against the evidence turns.
recall@k = share of a question's evidence turns found in the top k, averaged over questions.

--dump FILE writes the ranking of every question (``<sample_id>/q<n>``: the dia_ids of the core +
peripheral list with their total scores, one JSON line each) on a fixed clock, for
``python -m bench compare-dumps`` before and after a refactor (see bench/dumps.py); such a run
leaves bench/results/locomo.json as it was.

--misspell asks every question with one or two of its content words misspelt (bench/misspell.py:
seeded, the same set every run) and writes bench/results/locomo-misspelt.json.

--words fts5 has recall search the words in SQLite FTS5 instead of the vector index (the default,
``RetrievalConfig.words_in_index``), for comparing the two.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import statistics
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench import dumps
from bench.misspell import misspell
from cognitive_memory.encoding import Encoder
from cognitive_memory.main import build_system, model_encoder
from cognitive_memory.service import MemoryService, StoreContext
from cognitive_memory.settings import Settings

__all__ = ["DEFAULT_DATA", "main", "questions", "run", "store_conversation", "turns"]

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo_dev.json"
RESULTS = Path(__file__).parent / "results"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    category: int
    evidence: frozenset[str]


def evidence_ids(raw: Sequence[str]) -> frozenset[str]:
    """Normalise evidence ids; the file has a few malformed ones ('D8:6; D9:17', 'D:11:26')."""
    found = set()
    for item in raw:
        for part in item.split(";"):
            match = _EVIDENCE.search(part.strip())
            if match:
                found.add(f"D{int(match.group(1))}:{int(match.group(2))}")
    return frozenset(found)


def turns(conversation: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(dia_id, text to store, speaker) for every turn, in order."""
    session = 1
    while f"session_{session}" in conversation:
        date = conversation[f"session_{session}_date_time"]
        for turn in conversation[f"session_{session}"]:
            text = f"[{date}] {turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [image: {turn['blip_caption']}]"
            yield turn["dia_id"], text, turn["speaker"]
        session += 1


def questions(sample: dict[str, Any]) -> list[Question]:
    asked = []
    for qa in sample["qa"]:
        evidence = evidence_ids(qa.get("evidence", []))
        if qa["category"] in CATEGORIES and evidence:
            asked.append(Question(qa["question"], qa["category"], evidence))
    return asked


def score(ranked: Sequence[str], evidence: frozenset[str]) -> tuple[float, float, float]:
    """(recall@5, recall@10, reciprocal rank of the first evidence turn)."""
    at5 = len(evidence & set(ranked[:5])) / len(evidence)
    at10 = len(evidence & set(ranked[:10])) / len(evidence)
    rr = next((1.0 / rank for rank, memory in enumerate(ranked, start=1) if memory in evidence), 0.0)
    return at5, at10, rr


def store_conversation(service: MemoryService, sample: dict[str, Any]) -> dict[str, str]:
    """Store every turn of the sample's conversation; memory id -> dia_id."""
    dia_of = {}
    for dia_id, text, speaker in turns(sample["conversation"]):
        # Stored as transcript turns: the speaker is recorded, so the transcript rules apply.
        dia_of[service.store_experience(text, StoreContext(speaker=speaker)).memory_id] = dia_id
    return dia_of


def _conversation(
    sample: dict[str, Any],
    encoder: Encoder,
    root: Path,
    dump: list[dict[str, Any]] | None,
    misspelt: bool,
    words_in_index: bool = True,
) -> dict[str, Any]:
    """Store and ask one conversation (each question misspelt when ``misspelt``); with ``dump``, on a
    fixed clock, each ranking appended to it; ``words_in_index``: recall searches the words in the
    vector index (off: in FTS5)."""
    settings = Settings(env_file=None)
    settings.storage.data_dir = root / sample["sample_id"]
    clock = dumps.fixed_clock if dump is not None else None
    system = build_system(settings, encoder=encoder, clock=clock, follow_changes=True)
    system.retriever.config = replace(system.retriever.config, words_in_index=words_in_index)
    try:
        service = MemoryService(system, session_id=sample["sample_id"])
        started = time.perf_counter()
        dia_of = store_conversation(service, sample)
        store_seconds = time.perf_counter() - started
        for replica in system.followed:
            replica.build()  # as a server has them by its first recall
        rows, latencies = [], []
        for number, question in enumerate(questions(sample)):
            asked = misspell(question.text) if misspelt else question.text
            started = time.perf_counter()
            result = service.retrieve_memories(asked, ["core", "peripheral"], 10, False)
            latencies.append(time.perf_counter() - started)
            listed = [*result.memories.core, *result.memories.peripheral]
            ranked = [dia_of[m.id] for m in listed]
            rows.append((question.category, *score(ranked, question.evidence)))
            if dump is not None:
                system.flush()  # the next question sees this one's access counts, every run
                scores = [dumps.recall_score(m) for m in listed]
                key = f"{sample['sample_id']}/q{number}"
                dump.append(
                    dumps.question_line(
                        key,
                        zip(ranked, scores, strict=True),
                        core=len(result.memories.core),
                        text=asked,
                    )
                )
        return {"rows": rows, "latencies": latencies, "turns": len(dia_of), "store_seconds": store_seconds}
    finally:
        system.close()


def _summary(rows: Sequence[tuple[int, float, float, float]]) -> dict[str, float]:
    return {
        "questions": len(rows),
        "recall@5": round(statistics.fmean(r[1] for r in rows), 4),
        "recall@10": round(statistics.fmean(r[2] for r in rows), 4),
        "mrr": round(statistics.fmean(r[3] for r in rows), 4),
    }


def run(
    data: Path,
    limit: int | None = None,
    dump: list[dict[str, Any]] | None = None,
    misspelt: bool = False,
    words_in_index: bool = True,
) -> dict[str, Any]:
    samples = json.loads(data.read_text())[:limit]
    encoder = model_encoder(Settings(env_file=None))  # the server's own: ONNX Runtime, else torch
    encoder.warm_up()
    rows: list[tuple[int, float, float, float]] = []
    latencies: list[float] = []
    stored, store_seconds = 0, 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for sample in samples:
            outcome = _conversation(sample, encoder, Path(tmp), dump, misspelt, words_in_index)
            rows += outcome["rows"]
            latencies += outcome["latencies"]
            stored += outcome["turns"]
            store_seconds += outcome["store_seconds"]
    per_category = {
        f"{number} {name}": _summary([r for r in rows if r[0] == number])
        for number, name in CATEGORIES.items()
        if any(r[0] == number for r in rows)
    }
    return {
        "benchmark": "locomo",
        "data": data.name,
        "conversations": len(samples),
        "misspelt": misspelt,
        "turns_stored": stored,
        "store_mean_ms": round(store_seconds / max(stored, 1) * 1000, 2),
        "recall_p50_ms": round(statistics.median(latencies) * 1000, 2),
        "overall": _summary(rows),
        "categories": per_category,
    }


def table(result: dict[str, Any]) -> str:
    lines = [
        f"LoCoMo {result['data']}: {result['conversations']} conversations, {result['turns_stored']} turns"
        + (", misspelt questions" if result["misspelt"] else ""),
        f"{'category':<16} {'questions':>9} {'R@5':>7} {'R@10':>7} {'MRR':>7}",
    ]
    for name, row in [*result["categories"].items(), ("overall", result["overall"])]:
        scores = f"{row['recall@5']:>7.3f} {row['recall@10']:>7.3f} {row['mrr']:>7.3f}"
        lines.append(f"{name:<16} {row['questions']:>9} {scores}")
    lines.append(f"recall latency p50 {result['recall_p50_ms']} ms; mean store {result['store_mean_ms']} ms")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench locomo", description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversations", type=int, default=None, help="only the first N")
    parser.add_argument("--dump", type=Path, default=None, help="write every ranking to FILE (JSON lines)")
    parser.add_argument("--misspell", action="store_true", help="ask every question misspelt")
    parser.add_argument(
        "--words",
        choices=("fts5", "index"),
        default="index",
        help="search words in the vector index (the default) or FTS5",
    )
    args = parser.parse_args(argv)
    dump: list[dict[str, Any]] | None = [] if args.dump else None
    with dumps.repeatable_ids() if dump is not None else contextlib.nullcontext():
        result = run(args.data, args.conversations, dump, args.misspell, words_in_index=args.words == "index")
    if dump is not None:
        dumps.write(args.dump, dump)
    else:  # a dump runs on a fixed clock: its figures are not the benchmark's results
        RESULTS.mkdir(exist_ok=True)
        name = "locomo-misspelt.json" if args.misspell else "locomo.json"
        (RESULTS / name).write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))  # noqa: T201 - the benchmark's report goes to stdout
    print(json.dumps(result, indent=2))  # noqa: T201
