"""The word search alone and recall end to end, SQLite FTS5 against the vector index, at scale.

    python -m bench words [--memories 10000,100000] [--queries 200] [--keep DIR] [--data PATH]

Each size runs in a process of its own (one script per size: no cache or heap carried over):

1. A store of ``--memories`` LoCoMo turns, taken in order and cycled, later passes marked (as
   ``bench lived-in`` takes them), stored in bulk (``store_many`` in chunks of 1,000, then the
   vector index build, as ``bench suite`` ingests). The configured encoder embeds each distinct
   turn once; a later pass's copy gets that vector moved a little at random (``FirstPassEncoder``:
   about as far as the pass marker moves the real embedding), so 100,000 turns cost 3,435
   embeddings: the encoder is not what this bench measures. With ``--keep DIR`` the store is built
   in ``DIR/n<count>``, and a store found there is measured again without the ingest.
2. Two kinds of query: the LoCoMo questions (the first ``--queries``, cycled) and COMMON_WORDS,
   eight words held by most turns, asked ``--queries`` times.
3. The word search alone, the 50 best (recall's candidate pool), p50/p95: FTS5's ``bm25()``
   (own text 1, neighbours' words 0.3, as recall weighs them) over every row that holds a query
   word, against the Edge shard's sparse ``words`` vector queried alone with the vector recall asks
   it (``index/sparse.words_query``). Beside them, how many rows hold a query word (the rows FTS5
   scores).
4. Recall end to end through the use-case layer (``MemoryService.retrieve_memories`` as
   ``recall_memories`` calls it, the query's embedding included), with the words searched in the
   index (``RetrievalConfig.words_in_index``) and in FTS5, the two and the two kinds of query
   alternated call by call, so the machine's load drifts alike for all four; p50/p95 each and the
   ratio of the common words' p50 to the questions'. The encoder's batch-1 p50 on the questions is
   measured in the same process.

Results: ``bench/results/words-<sizes>.json``.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import qdrant_edge as qe

from bench.latency import RESULTS, percentiles, progress, time_each
from bench.lived_in import cycled_turns
from bench.locomo import DEFAULT_DATA, questions
from cognitive_memory.core.memory import Vector
from cognitive_memory.encoding import Encoder
from cognitive_memory.index.edge_layout import edge_words, shard_config, stored_datatype
from cognitive_memory.index.sparse import WORDS, SparseVector, query_stems, words_query
from cognitive_memory.main import EMBEDDING_DIMENSION, build_system, model_encoder
from cognitive_memory.service import MemoryService
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem

__all__ = ["COMMON_WORDS", "FirstPassEncoder", "main", "measure"]

# The eight words held by most LoCoMo dev turns' own text, leaving out what recall never searches
# (stopwords) and what a turn holds for its form, not its content (the session stamp's dates and
# times, the speakers' names, the image caption's "image"): nearly three turns in four hold one.
COMMON_WORDS = "great photo thanks really awesome like wow yeah"
POOL = 50  # recall's candidate pool: what each search offers
CHUNK = 1000
_KINDS = ("question", "common")
_PASS = re.compile(r"(.*) \(pass \d+\)", re.DOTALL)
# Per component: a later pass's vector lies about as near its first pass's as the pass marker
# moves the real embedding (measured on LoCoMo turns, docs/performance.md).
_MOVE = 0.0073
_BM25 = (
    "SELECT rowid, -bm25(memory_fts, 1.0, 0.3) AS score FROM memory_fts "
    "WHERE memory_fts MATCH ? ORDER BY score DESC LIMIT ?"
)


@dataclass(frozen=True, slots=True)
class _Query:
    """A query as each word search takes it: FTS5's expression and the index's sparse vector."""

    kind: str
    text: str
    expression: str
    words: SparseVector


class FirstPassEncoder:
    """``encoder`` for a bulk build of cycled turns: each distinct turn embedded once, a later
    pass's copy (``text (pass N)``) given its first pass's vector moved a little at random, the
    same in every run (seeded by the text)."""

    def __init__(self, encoder: Encoder) -> None:
        self._encoder = encoder
        self._first: dict[str, Vector] = {}

    @property
    def name(self) -> str:
        return self._encoder.name

    @property
    def dimension(self) -> int:
        return self._encoder.dimension

    @property
    def is_ready(self) -> bool:
        return self._encoder.is_ready

    def warm_up(self) -> None:
        self._encoder.warm_up()

    def encode(self, texts: Sequence[str]) -> Vector:
        firsts = [_first_pass(text) for text in texts]
        new = list(dict.fromkeys(first for first in firsts if first not in self._first))
        if new:
            self._first.update(zip(new, self._encoder.encode(new), strict=True))
        return np.stack([_moved(text, self._first[first]) for text, first in zip(texts, firsts, strict=True)])


def _first_pass(text: str) -> str:
    matched = _PASS.fullmatch(text)
    return matched.group(1) if matched else text


def _moved(text: str, vector: Vector) -> Vector:
    if _first_pass(text) == text:
        return vector
    rng = np.random.default_rng(zlib.crc32(text.encode()))
    moved = vector + rng.normal(0.0, _MOVE, vector.shape).astype(np.float32)
    return (moved / np.linalg.norm(moved)).astype(np.float32)


def measure(data: Path, count: int, queries: int, keep: Path | None) -> dict[str, Any]:
    """One size: build (or reuse) the store, then the word search alone and recall end to end."""
    samples = json.loads(data.read_text())
    asked = [q.text for sample in samples for q in questions(sample)]
    cues = [asked[i % len(asked)] for i in range(queries)]
    settings = Settings(env_file=None)
    encoder = model_encoder(settings)
    encoder.warm_up()
    with tempfile.TemporaryDirectory() as tmp:
        settings.storage.data_dir = (keep or Path(tmp)) / f"n{count}"
        ingest = _ingest(settings, FirstPassEncoder(encoder), samples, count)
        system = build_system(settings, encoder=encoder)
        try:
            prepared = [_prepared(system, "question", cue) for cue in cues]
            prepared += [_prepared(system, "common", COMMON_WORDS)] * queries
            recall = _recall(system, cues, queries)
        finally:
            system.close()
        words = _word_search(settings.storage.database_path, settings.storage.vector_path, prepared)
    encoder_p50 = percentiles(time_each(lambda text: encoder.encode([text]), cues))
    return {
        "memories": count,
        "reused_store": ingest is None,
        "ingest_seconds": None if ingest is None else round(ingest, 1),
        "common_words": COMMON_WORDS,
        "word_search": words,
        "recall": recall,
        "encoder_batch1": encoder_p50,
        "recall_p50_over_encoder": {
            where: {kind: round(recall[where][kind]["p50_ms"] / encoder_p50["p50_ms"], 2) for kind in _KINDS}
            for where in ("index", "fts5")
        },
    }


def _ingest(
    settings: Settings, encoder: Encoder, samples: Sequence[dict[str, Any]], count: int
) -> float | None:
    """Store ``count`` turns in chunks (those a kept store lacks: an interrupted build goes on), then
    build the vector index; the seconds it took (None: the store was whole already)."""
    system = build_system(settings, encoder=encoder)
    try:
        stored = system.records.memories.counts().total
        if stored >= count:
            return None
        texts = [text for text, _ in cycled_turns(samples, count)]
        started = time.perf_counter()
        for offset in range(stored, len(texts), CHUNK):
            _progress(f"{count}: stored {offset} turns")
            system.store_many(texts[offset : offset + CHUNK])
        system.build_index()
        return time.perf_counter() - started
    finally:
        system.close()


def _prepared(system: CognitiveSystem, kind: str, text: str) -> _Query:
    """The query's terms as recall reads them (corrected against the store's vocabulary)."""
    words = system.records.words
    terms = words.query_terms(text)
    expression = " OR ".join(f'"{word}"' for word, _ in terms.pairs())
    return _Query(kind, text, expression, words_query(terms, *words.document_counts(query_stems(terms))))


def _recall(system: CognitiveSystem, cues: Sequence[str], repeats: int) -> dict[str, Any]:
    """Recall through the use-case layer, words in the index and in FTS5, call by call alternated."""
    service = MemoryService(system)
    base = system.retriever.config
    times: dict[tuple[str, str], list[float]] = {(w, k): [] for w in ("index", "fts5") for k in _KINDS}
    for number in range(repeats):
        for where in ("index", "fts5"):
            system.retriever.config = replace(base, words_in_index=where == "index")
            for kind, text in (("question", cues[number % len(cues)]), ("common", COMMON_WORDS)):
                started = time.perf_counter()
                service.retrieve_memories(text, detail="brief")
                times[where, kind].append(time.perf_counter() - started)
    system.retriever.config = base
    return {
        where: {
            **{kind: percentiles(times[where, kind]) for kind in _KINDS},
            "common_over_question_p50": _ratio(times[where, "common"], times[where, "question"]),
        }
        for where in ("index", "fts5")
    }


def _word_search(database: Path, vectors: Path, prepared: Sequence[_Query]) -> dict[str, Any]:
    """FTS5's ``bm25()`` and the shard's sparse search alone, the same queries, p50/p95."""
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as conn:
        fts5 = _timed(lambda q: conn.execute(_BM25, (q.expression, POOL)).fetchall(), prepared)
        matches = {q.text: _matches(conn, q.expression) for q in prepared}
    shard = qe.EdgeShard.load(str(vectors), shard_config(EMBEDDING_DIMENSION, stored_datatype(vectors)))
    try:
        index = _timed(lambda q: shard.query(_sparse_request(q.words)), prepared)
    finally:
        shard.close()
    questions_matched = [matches[q.text] for q in prepared if q.kind == "question"]
    return {
        "fts5_bm25": fts5,
        "index_sparse": index,
        "rows_holding_a_query_word": {
            "question_p50": statistics.median(questions_matched),
            "common": matches[COMMON_WORDS],
        },
    }


def _sparse_request(words: SparseVector) -> qe.QueryRequest:
    return qe.QueryRequest(
        limit=POOL,
        query=qe.Query.Nearest(edge_words(words), using=WORDS),
        with_payload=False,
        with_vector=False,
    )


def _matches(conn: sqlite3.Connection, expression: str) -> int:
    row = conn.execute("SELECT count(*) FROM memory_fts WHERE memory_fts MATCH ?", (expression,)).fetchone()
    return int(row[0])


def _timed(call: Callable[[_Query], Any], prepared: Sequence[_Query]) -> dict[str, Any]:
    """p50/p95 of ``call`` per kind of query."""
    times: dict[str, list[float]] = {kind: [] for kind in _KINDS}
    for query in prepared:
        started = time.perf_counter()
        call(query)
        times[query.kind].append(time.perf_counter() - started)
    return {kind: percentiles(samples) for kind, samples in times.items()}


def _ratio(numerator: Sequence[float], denominator: Sequence[float]) -> float:
    return round(statistics.median(numerator) / statistics.median(denominator), 2)


_progress = partial(progress, "words")


def _in_own_process(count: int, args: argparse.Namespace) -> dict[str, Any]:
    """``measure`` for one size in a new process (the same interpreter and working directory)."""
    command = [sys.executable, "-m", "bench", "words", "--one", "--memories", str(count)]
    command += ["--queries", str(args.queries), "--data", str(args.data)]
    command += ["--keep", str(args.keep)] if args.keep else []
    _progress(f"{count} memories: {' '.join(command[1:])}")
    finished = subprocess.run(command, check=True, stdout=subprocess.PIPE)
    result: dict[str, Any] = json.loads(finished.stdout)
    return result


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m bench words``: run each size, write bench/results/words-<sizes>.json, print it."""
    parser = argparse.ArgumentParser(prog="python -m bench words", description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--memories", default="10000,100000", help="comma-separated sizes, e.g. 20000")
    parser.add_argument("--queries", type=int, default=200, help="questions (and common-word queries) a size")
    parser.add_argument("--keep", type=Path, help="keep stores in DIR/n<count>; reuse one found there")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a size's own process
    args = parser.parse_args(argv)
    try:
        sizes = [int(part) for part in args.memories.split(",") if part.strip()]
    except ValueError:
        parser.error(f"--memories takes comma-separated whole numbers, not {args.memories!r}")
    if not sizes or min(sizes) < 1 or args.queries < 1:
        parser.error("--memories and --queries must be at least 1")
    if args.one:
        print(json.dumps(measure(args.data, sizes[0], args.queries, args.keep)))  # noqa: T201 - to the parent
        return
    result = {
        "benchmark": "words",
        "encoder_backend": Settings(env_file=None).encoder.backend,
        "sizes": [_in_own_process(count, args) for count in sizes],
    }
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"words-{'-'.join(str(n) for n in sizes)}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))  # noqa: T201 - the benchmark's report goes to stdout
