"""FTS5's Porter stemmer, word by word against SQLite's own (an in-memory FTS5 table as the oracle)."""

from __future__ import annotations

import sqlite3

import pytest

from cognitive_memory.core.porter import stem

# Words that reach every step and every departure of FTS5's stemmer from the reference one.
WORDS = [
    "caresses",
    "ponies",
    "ties",
    "caress",
    "cats",
    "feed",
    "agreed",
    "plastered",
    "bled",
    "motoring",
    "sing",
    "conflated",
    "troubled",
    "sized",
    "hopping",
    "tanned",
    "falling",
    "hissing",
    "fizzed",
    "failing",
    "filing",
    "happy",
    "sky",
    "relational",
    "conditional",
    "rational",
    "valenci",
    "hesitanci",
    "digitizer",
    "conformabli",
    "radicalli",
    "differentli",
    "vileli",
    "analogousli",
    "vietnamization",
    "predication",
    "operator",
    "feudalism",
    "decisiveness",
    "hopefulness",
    "callousness",
    "formaliti",
    "sensitiviti",
    "sensibiliti",
    "triplicate",
    "formative",
    "formalize",
    "electriciti",
    "electrical",
    "hopeful",
    "goodness",
    "revival",
    "allowance",
    "inference",
    "airliner",
    "gyroscopic",
    "adjustable",
    "defensible",
    "irritant",
    "replacement",
    "adjustment",
    "dependent",
    "adoption",
    "homologou",
    "communism",
    "activate",
    "angulariti",
    "homologous",
    "effective",
    "bowdlerize",
    "probate",
    "rate",
    "cease",
    "controll",
    "roll",
    "generalization",
    "oscillators",
    "yes",
    "eyes",
    "boys",
    "syzygy",
    "played",
    "playing",
    "toy",
    "toys",
    "yelling",
    "daily",
    "enjoying",
    "analysing",
    "b1ng",
    "a",
    "ab",
    "abc",
    "running",
    "runs",
    "ran",
    "meetings",
    "meeting",
    "met",
    "pottery",
    "emptied",
    "xylophonists",
    "naïveté",
]


@pytest.fixture(scope="module")
def fts5() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'porter ascii')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    return conn


def _sqlite_stem(conn: sqlite3.Connection, word: str) -> str:
    conn.execute("DELETE FROM t")
    conn.execute("INSERT INTO t (rowid, x) VALUES (1, ?)", (word,))
    (term,) = conn.execute("SELECT term FROM v").fetchone()
    return str(term)


@pytest.mark.parametrize("word", [w for w in WORDS if w.isascii()])
def test_stems_every_word_as_fts5_does(fts5: sqlite3.Connection, word: str) -> None:
    assert stem(word) == _sqlite_stem(fts5, word)


def test_the_classic_examples_stem_to_porters_stems() -> None:
    assert [stem(w) for w in ("caresses", "ponies", "hopping", "relational", "generalization")] == [
        "caress",
        "poni",
        "hop",
        "relat",
        "gener",
    ]


def test_tokens_shorter_than_three_bytes_or_longer_than_64_pass_through() -> None:
    assert stem("is") == "is"
    assert stem("s" * 10 + "ing" * 20) == "s" * 10 + "ing" * 20
