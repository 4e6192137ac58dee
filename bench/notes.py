"""Recall on notes, not chat: the npm READMEs of ../shared/data/npm-readmes.

python -m bench notes [--data PATH] [--dump FILE] [--misspell] [--words index|fts5]

Loads every README as `memory_system load` does (one memory per section), asks each package's
own one-line description (which never names the package) and counts a hit at k when a memory of
that package's README is among the first k. Three rankings go through the same harness and the
same store: our recall (core + peripheral, the relevance floor on), BM25 alone (the lexical index)
and MiniLM alone (exact cosine over every stored vector). Results go to
``bench/results/notes.json``.

--dump FILE writes every ranking (``<ranking>:<README file>``: the memories, keyed by README path,
section path and part, with their scores, one JSON line each) on a fixed clock, for
``python -m bench compare-dumps`` before and after a refactor (see bench/dumps.py); such a run
leaves bench/results/notes.json as it was.

--misspell asks every description with one or two of its content words misspelt
(bench/misspell.py: seeded, the same set every run) and writes bench/results/notes-misspelt.json.

--words fts5 has recall search the words in SQLite FTS5 instead of the vector index (the default,
``RetrievalConfig.words_in_index``), for comparing the two.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from hashlib import sha1
from pathlib import Path
from typing import Any

import numpy as np

from bench import dumps
from bench.latency import RESULTS
from bench.misspell import misspell
from cognitive_memory.core import CognitiveMemory
from cognitive_memory.main import build_system, model_encoder
from cognitive_memory.service import MemoryService
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem

__all__ = ["DATA", "main", "run"]

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "npm-readmes"
KS = (1, 5, 10)

Ranking = Callable[[str], list[tuple[str, float]]]


def _rankings(system: CognitiveSystem, service: MemoryService) -> dict[str, Ranking]:
    """query -> (memory id, score) pairs, best first, for each ranking."""
    memories = [m for batch in system.records.memories.batches() for m in batch]
    ids = [m.id for m in memories]
    matrix = np.stack([m.cognitive_embedding for m in memories if m.cognitive_embedding is not None])

    def recall(query: str) -> list[tuple[str, float]]:
        result = service.retrieve_memories(query, ["core", "peripheral"], max(KS), False)
        listed = (*result.memories.core, *result.memories.peripheral)
        return [(m.id, dumps.recall_score(m)) for m in listed]

    def bm25(query: str) -> list[tuple[str, float]]:
        return list(system.records.words.search(query, max(KS)))

    def minilm(query: str) -> list[tuple[str, float]]:
        scores = matrix @ system.encoder.encode([query])[0]
        return [(ids[i], float(scores[i])) for i in np.argsort(-scores)[: max(KS)]]

    return {"recall": recall, "bm25": bm25, "minilm": minilm}


def _memory_key(memory: CognitiveMemory, root: Path) -> str:
    """A memory's stable name: its README's path under ``root``, section path and part."""
    metadata, source = memory.metadata, memory.origin or ""
    with contextlib.suppress(ValueError):
        source = str(Path(source).relative_to(root))
    key = f"{source}#{' > '.join(metadata.get('section_path', []))}"
    return f"{key} ({metadata['part']}/{metadata['parts']})" if "part" in metadata else key


def _memory_keys(memories: Sequence[CognitiveMemory], root: Path) -> dict[str, str]:
    """Memory id -> its stable name; two sections of one README with the same heading path are
    told apart by their text."""
    keys = {m.id: _memory_key(m, root) for m in memories}
    counts = Counter(keys.values())
    for m in memories:
        if counts[keys[m.id]] > 1:
            keys[m.id] += f" @{sha1(m.content.encode()).hexdigest()[:8]}"
    return keys


def _score(
    name: str,
    ranking: Ranking,
    queries: Sequence[dict[str, str]],
    file_of: dict[str, str],
    dump: Callable[[str, list[tuple[str, float]]], None] | None,
) -> dict[str, Any]:
    hits, reciprocal, latencies = dict.fromkeys(KS, 0), 0.0, []
    for entry in queries:
        started = time.perf_counter()
        scored = ranking(entry["query"])
        latencies.append(time.perf_counter() - started)
        if dump is not None:
            dump(f"{name}:{entry['file']}", scored)
        ranked = [memory_id for memory_id, _ in scored]
        rank = next(
            (
                i
                for i, memory_id in enumerate(ranked, start=1)
                if file_of.get(memory_id, "").endswith("/" + entry["file"])
            ),
            None,
        )
        reciprocal += 1 / rank if rank else 0.0
        for k in KS:
            hits[k] += rank is not None and rank <= k
    return {
        **{f"recall@{k}": round(hits[k] / len(queries), 3) for k in KS},
        "mrr": round(reciprocal / len(queries), 3),
        "p50_ms": round(statistics.median(latencies) * 1000, 2),
    }


def run(
    data: Path, dump: list[dict[str, Any]] | None = None, misspelt: bool = False, words_in_index: bool = True
) -> dict[str, Any]:
    """The three rankings' scores (of misspelt queries when ``misspelt``); with ``dump``, on a fixed
    clock, each ranking appended to it; ``words_in_index``: recall searches the words in the vector
    index (off: in FTS5)."""
    queries = json.loads((data / "queries.json").read_text())
    if misspelt:
        queries = [{**entry, "query": misspell(entry["query"])} for entry in queries]
    settings = Settings(env_file=None)
    encoder = model_encoder(settings)
    encoder.warm_up()
    with tempfile.TemporaryDirectory() as directory:
        settings.storage.data_dir = Path(directory)
        system = build_system(
            settings,
            encoder=encoder,
            clock=dumps.fixed_clock if dump is not None else None,
            follow_changes=True,
        )
        system.retriever.config = replace(system.retriever.config, words_in_index=words_in_index)
        try:
            service = MemoryService(system)
            loaded = service.load_markdown(str(data / "readmes"))
            for replica in system.followed:
                replica.build()  # as a server has them by its first recall
            memories = [m for batch in system.records.memories.batches() for m in batch]
            file_of = {m.id: m.origin or "" for m in memories}
            key_of = _memory_keys(memories, data / "readmes")

            def record(question: str, scored: list[tuple[str, float]]) -> None:
                system.flush()  # the next question sees this one's access counts, every run
                if dump is not None:
                    dump.append(dumps.question_line(question, [(key_of[i], score) for i, score in scored]))

            scores = {
                name: _score(name, ranking, queries, file_of, record if dump is not None else None)
                for name, ranking in _rankings(system, service).items()
            }
        finally:
            system.close()
    return {
        "benchmark": "notes",
        "misspelt": misspelt,
        "packages": len(queries),
        "memories": loaded.chunks.added,
        **scores,
    }


def table(result: dict[str, Any]) -> str:
    lines = [
        f"npm READMEs: {result['packages']} packages, {result['memories']} memories"
        + (", misspelt queries" if result["misspelt"] else ""),
        f"{'ranking':<8} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6} {'p50 ms':>7}",
    ]
    for name in ("recall", "bm25", "minilm"):
        row = result[name]
        lines.append(
            f"{name:<8} {row['recall@1']:>6.3f} {row['recall@5']:>6.3f} {row['recall@10']:>6.3f} "
            f"{row['mrr']:>6.3f} {row['p50_ms']:>7}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench notes", description=__doc__)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--dump", type=Path, default=None, help="write every ranking to FILE (JSON lines)")
    parser.add_argument("--misspell", action="store_true", help="ask every description misspelt")
    parser.add_argument(
        "--words",
        choices=("fts5", "index"),
        default="index",
        help="search words in the vector index (the default) or FTS5",
    )
    args = parser.parse_args(argv)
    dump: list[dict[str, Any]] | None = [] if args.dump else None
    with dumps.repeatable_ids() if dump is not None else contextlib.nullcontext():
        result = run(args.data, dump, args.misspell, words_in_index=args.words == "index")
    if dump is not None:
        dumps.write(args.dump, dump)
    else:  # a dump runs on a fixed clock: its figures are not the benchmark's results
        RESULTS.mkdir(exist_ok=True)
        name = "notes-misspelt.json" if args.misspell else "notes.json"
        (RESULTS / name).write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))  # noqa: T201 - the benchmark's report goes to stdout
    print(json.dumps(result, indent=2))  # noqa: T201
