"""Characters per recall answer: how much of it is the memories' own text.

python -m bench answer-size

Two stores: the npm READMEs of ../shared/data/npm-readmes loaded as `memory_system load` does
(sections: the typical notes) and the first LoCoMo conversation stored as transcript turns (very
short memories). Each store is asked its own queries (each package's one-line description; the
conversation's questions) with max_results 5, in detail brief and full. Per corpus and detail it
reports the median over the queries that found anything of: the characters of the structured
copy (compact JSON of the answer without nulls, as the MCP answer carries it), of the text block,
and of the returned memories' own whole text, with the ratios of both copies to that text. The
issue's target: a brief answer at most 1.5x the characters of its memories' own text. Results go
to ``bench/results/answer_size.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import locomo
from bench.latency import RESULTS
from bench.notes import DATA as NOTES
from cognitive_memory.encoding import Encoder
from cognitive_memory.main import build_system, model_encoder
from cognitive_memory.service import Detail, MemoryService, RecallResult, format_recall
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem

__all__ = ["answer_sizes", "main", "run"]

MAX_RESULTS = 5
DETAILS: tuple[Detail, ...] = ("brief", "full")


def structured_chars(result: RecallResult) -> int:
    """Characters of the structured copy as it goes over the wire (compact JSON, nulls dropped)."""
    body = result.model_dump(mode="json", exclude_none=True)
    return len(json.dumps(body, ensure_ascii=False, separators=(",", ":")))


def _sizes(service: MemoryService, result: RecallResult) -> tuple[int, int, int, int]:
    """(memories, structured characters, text characters, the memories' own whole text)."""
    lists = result.memories
    ids = [m.id for m in (*lists.core, *lists.peripheral, *lists.bridge)]  # short in a brief answer
    read = [service.read_memory(memory_id) for memory_id in ids]
    own = sum(len(found.record.content) for found in read if found is not None)
    return len(ids), structured_chars(result), len(format_recall(result)), own


def answer_sizes(service: MemoryService, queries: Sequence[str]) -> dict[str, Any]:
    """Median sizes of the answers to ``queries`` in each detail (answers with no memory left out)."""
    report: dict[str, Any] = {}
    for detail in DETAILS:
        rows = [
            _sizes(service, service.retrieve_memories(query, max_results=MAX_RESULTS, detail=detail))
            for query in queries
        ]
        found = [row for row in rows if row[0]]
        if not found:
            report[detail] = {"answers": 0}
            continue
        report[detail] = {
            "answers": len(found),
            "most_memories": max(row[0] for row in found),
            "memories": statistics.median(row[0] for row in found),
            "structured_chars": statistics.median(row[1] for row in found),
            "text_chars": statistics.median(row[2] for row in found),
            "content_chars": statistics.median(row[3] for row in found),
            "structured_ratio": round(statistics.median(row[1] / row[3] for row in found), 2),
            "text_ratio": round(statistics.median(row[2] / row[3] for row in found), 2),
        }
    return {"queries": len(queries), **report}


def _store(encoder: Encoder, root: Path, name: str) -> tuple[CognitiveSystem, MemoryService]:
    settings = Settings(env_file=None)
    settings.storage.data_dir = root / name
    system = build_system(settings, encoder=encoder)
    return system, MemoryService(system, session_id=name)


def run(notes: Path, conversations: Path) -> dict[str, Any]:
    encoder = model_encoder(Settings(env_file=None))
    encoder.warm_up()
    readme_queries = [entry["query"] for entry in json.loads((notes / "queries.json").read_text())]
    sample = json.loads(conversations.read_text())[0]
    result: dict[str, Any] = {"benchmark": "answer-size", "max_results": MAX_RESULTS}
    with tempfile.TemporaryDirectory() as tmp:
        system, service = _store(encoder, Path(tmp), "readmes")
        try:
            service.load_markdown(str(notes / "readmes"))
            result["readmes"] = answer_sizes(service, readme_queries)
        finally:
            system.close()
        system, service = _store(encoder, Path(tmp), "locomo")
        try:
            locomo.store_conversation(service, sample)
            asked = [question.text for question in locomo.questions(sample)]
            result["locomo"] = answer_sizes(service, asked)
        finally:
            system.close()
    return result


def table(result: dict[str, Any]) -> str:
    lines = [
        f"Recall answers, max_results {result['max_results']} (medians over answers with any memory)",
        f"{'corpus':<8} {'detail':<6} {'answers':>7} {'memories':>8} {'struct':>7} {'text':>7} "
        f"{'content':>7} {'struct/c':>8} {'text/c':>7}",
    ]
    for corpus in ("readmes", "locomo"):
        for detail in DETAILS:
            row = result[corpus][detail]
            if not row["answers"]:
                lines.append(f"{corpus:<8} {detail:<6} {0:>7}")
                continue
            lines.append(
                f"{corpus:<8} {detail:<6} {row['answers']:>7} {row['memories']:>8} "
                f"{row['structured_chars']:>7} {row['text_chars']:>7} {row['content_chars']:>7} "
                f"{row['structured_ratio']:>8} {row['text_ratio']:>7}"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench answer-size", description=__doc__)
    parser.add_argument("--notes", type=Path, default=NOTES)
    parser.add_argument("--data", type=Path, default=locomo.DEFAULT_DATA)
    args = parser.parse_args(argv)
    result = run(args.notes, args.data)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "answer_size.json").write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))  # noqa: T201 - the benchmark's report goes to stdout
