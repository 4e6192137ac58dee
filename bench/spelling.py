"""What correcting a query word costs at a large vocabulary: the delete index's size and the time
of ``vocabulary.near`` plus ``spelling.corrections`` for misspelt terms.

    python -m bench spelling [--terms N] [--queries Q]

Fills a scratch database (migration 0014's two tables) with N distinct seeded pseudo-words of 5
to 12 letters (a store of a million memories holds a few hundred thousand distinct terms), then
looks up Q of them misspelt by one edit (bench/misspell.py's edits). Prints the table sizes, the
build time and the lookup's p50 / p95.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import string
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.misspell import misspell
from cognitive_memory.core.spelling import allowed_distance, corrections
from cognitive_memory.storage import vocabulary

__all__ = ["main", "run"]

_TABLES = """
CREATE TABLE vocabulary (term TEXT PRIMARY KEY, memories INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE vocabulary_deletes (variant TEXT NOT NULL, term TEXT NOT NULL, PRIMARY KEY (variant, term))
    WITHOUT ROWID;
CREATE TABLE memory_words (memory_rowid INTEGER PRIMARY KEY, terms TEXT NOT NULL);
"""


def _words(count: int, rng: random.Random) -> list[str]:
    found: set[str] = set()
    while len(found) < count:
        found.add("".join(rng.choices(string.ascii_lowercase, k=rng.randint(5, 12))))
    return sorted(found)


def run(terms: int, queries: int) -> dict[str, Any]:
    """Build the vocabulary of ``terms`` words and time ``queries`` corrections in it."""
    rng = random.Random(7)
    words = _words(terms, rng)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "vocabulary.db"
        conn = sqlite3.connect(path, isolation_level=None)
        conn.executescript(_TABLES)
        started = time.perf_counter()
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO memory_words (memory_rowid, terms) VALUES (?, ?)", enumerate(words, start=1)
        )
        vocabulary.rebuild(conn)
        conn.execute("COMMIT")
        built = time.perf_counter() - started
        (variants,) = conn.execute("SELECT count(*) FROM vocabulary_deletes").fetchone()
        conn.execute("VACUUM")
        size = path.stat().st_size
        timings, found = [], 0
        for word in rng.sample(words, queries):
            typo = misspell(word.capitalize(), seed="bench").lower()
            started = time.perf_counter()
            near = vocabulary.near(conn, [typo])[typo]
            fixed = corrections(typo, 0, near) if allowed_distance(typo) else ()
            timings.append(time.perf_counter() - started)
            found += any(term == word for term, _ in fixed)
        conn.close()
    timings.sort()
    return {
        "benchmark": "spelling",
        "terms": terms,
        "delete_index_rows": variants,
        "database_mb": round(size / 1e6, 1),
        "build_s": round(built, 1),
        "lookups": queries,
        "corrected_to_the_word": found,
        "lookup_p50_ms": round(statistics.median(timings) * 1000, 3),
        "lookup_p95_ms": round(timings[int(len(timings) * 0.95)] * 1000, 3),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench spelling", description=__doc__)
    parser.add_argument("--terms", type=int, default=300_000)
    parser.add_argument("--queries", type=int, default=500)
    args = parser.parse_args(argv)
    print(json.dumps(run(args.terms, args.queries), indent=2))  # noqa: T201 - the report goes to stdout
