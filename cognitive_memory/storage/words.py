"""Word evidence for recall's relevance floor: which of a query's words each memory holds,
weighted by how rare each word is in the store.

A word found in few memories says more than a common one, so each query word weighs its inverse
document frequency, ``ln((N - df + 0.5) / (df + 0.5) + 1)`` (BM25's, never negative); a word no
memory holds weighs the most. A memory's word share is the weight of the query words its own text
holds (after the lexical index's stemming) over the weight of all of them: 1.0 when it holds every
word, 0.0 when it holds none. Unlike BM25 scores, the share means the same in a store of ten
memories and of a million, and a query about something the store never mentions gets a low share
everywhere.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence

__all__ = ["prepare", "word_shares"]

# The lexical index's tokenizer (migration 0002_lexical_index_and_connections): the query's words
# go through the same one, so "running" in a query finds "runs" in a memory as the index does.
_TOKENIZER = "porter unicode61 remove_diacritics 2"


def prepare(conn: sqlite3.Connection) -> None:
    """Create the connection's temporary tables: a scratch index that stems the query's words,
    and views of both indexes' terms. Temporary: nothing is written to the memory database."""
    conn.executescript(
        f"""
        CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_words USING fts5(word, tokenize = '{_TOKENIZER}');
        CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_terms USING fts5vocab(temp, query_words, 'instance');
        CREATE VIRTUAL TABLE IF NOT EXISTS temp.memory_terms USING fts5vocab(main, memory_fts, 'row');
        """
    )


def word_shares(conn: sqlite3.Connection, words: Sequence[str], ids: Sequence[str]) -> dict[str, float]:
    """Each of ``ids``'s word share of ``words`` (see the module docstring); ids of memories that
    hold none of the words are left out."""
    if not words or not ids:
        return {}
    terms = _terms(conn, words)
    known = sorted({term for found in terms.values() for term in found})
    marks = ",".join("?" * len(known))
    frequency = dict(conn.execute(f"SELECT term, doc FROM temp.memory_terms WHERE term IN ({marks})", known))
    (total,) = conn.execute("SELECT count(*) FROM memories").fetchone()
    weights = {}
    for index, word in enumerate(words, start=1):
        # A word the tokenizer splits is a phrase: as rare as its rarest term at most.
        df = min((frequency.get(term, 0) for term in terms.get(index, ())), default=0)
        weights[word] = (math.log((total - df + 0.5) / (df + 0.5) + 1.0), df)
    whole = sum(weight for weight, _ in weights.values())
    if whole <= 0:
        return {}
    rows = dict(conn.execute(f"SELECT rowid, id FROM memories WHERE id IN ({','.join('?' * len(ids))})", ids))
    rowids = list(rows)
    among = ",".join("?" * len(rowids))
    held: dict[str, float] = {}
    for word, (weight, df) in weights.items():
        if df == 0:
            continue  # no memory holds it: nothing to look up
        quoted = word.replace('"', '""')
        found = conn.execute(
            f"SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? AND rowid IN ({among})",
            (f'content : "{quoted}"', *rowids),
        )
        for (rowid,) in found:
            memory_id = rows[rowid]
            held[memory_id] = held.get(memory_id, 0.0) + weight
    return {memory_id: weight / whole for memory_id, weight in held.items()}


def _terms(conn: sqlite3.Connection, words: Sequence[str]) -> dict[int, set[str]]:
    """The index terms of each word (1-based position), through the lexical index's tokenizer."""
    conn.execute("DELETE FROM temp.query_words")
    conn.executemany(
        "INSERT INTO temp.query_words (rowid, word) VALUES (?, ?)", list(enumerate(words, start=1))
    )
    terms: dict[int, set[str]] = {}
    for doc, term in conn.execute("SELECT doc, term FROM temp.query_terms"):
        terms.setdefault(int(doc), set()).add(str(term))
    return terms
