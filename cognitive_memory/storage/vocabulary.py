"""The store's vocabulary: how many memories hold each term of their own text (``vocabulary``),
and every term of letters under its spellings with one letter dropped (``vocabulary_deletes``,
a symmetric-delete index), so a query term finds its near spellings by a few point reads
instead of a scan of the vocabulary (``core/spelling.py``).

Kept in the transaction that writes a memory's terms (``words.remember_terms``,
``words.forget_terms``): it moves with ``memory_words`` and cannot drift from it; migration
0015_vocabulary filled it for existing stores and ``rebuild`` fills it again from ``memory_words``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence

from cognitive_memory.core.spelling import allowed_distance, deletes, indexed

__all__ = ["count_terms", "held", "near", "rebuild"]

# Terms per statement: well under SQLite's limit of bound parameters.
_BATCH = 500
_STEP = "UPDATE vocabulary SET memories = memories {} 1 WHERE term = ?"
_INDEX = "INSERT OR IGNORE INTO vocabulary_deletes (variant, term) VALUES (?, ?)"
_UNINDEX = "DELETE FROM vocabulary_deletes WHERE variant = ? AND term = ?"


def count_terms(conn: sqlite3.Connection, before: Iterable[str], after: Iterable[str]) -> None:
    """Count a memory's terms changing from ``before`` to ``after`` (empty for a new or a deleted
    memory): each term gained one more memory, each term lost one fewer, and the delete index
    follows the terms that appear or disappear."""
    old, new = set(before), set(after)
    added, removed = sorted(new - old), sorted(old - new)
    if added:
        known = set(held(conn, added))
        conn.executemany(_STEP.format("+"), [(t,) for t in known])
        fresh = [term for term in added if term not in known]
        conn.executemany("INSERT INTO vocabulary (term, memories) VALUES (?, 1)", [(t,) for t in fresh])
        conn.executemany(_INDEX, list(_variants(fresh)))
    if removed:
        counts = held(conn, removed)
        conn.executemany(_STEP.format("-"), [(t,) for t in counts])
        gone = [term for term, count in counts.items() if count <= 1]
        conn.executemany("DELETE FROM vocabulary WHERE term = ?", [(t,) for t in gone])
        conn.executemany(_UNINDEX, list(_variants(gone)))


def held(conn: sqlite3.Connection, terms: Sequence[str]) -> dict[str, int]:
    """How many memories hold each of ``terms`` (terms no memory holds are left out)."""
    found: dict[str, int] = {}
    for start in range(0, len(terms), _BATCH):
        part = terms[start : start + _BATCH]
        marks = ",".join("?" * len(part))
        found |= {
            str(term): int(count)
            for term, count in conn.execute(
                f"SELECT term, memories FROM vocabulary WHERE term IN ({marks})", part
            )
        }
    return found


def near(conn: sqlite3.Connection, terms: Sequence[str]) -> dict[str, dict[str, int]]:
    """For each of ``terms``, the store's terms that share a spelling with it once each drops up
    to ``allowed_distance`` letters (the query's side) and one (the index's side), with how many
    memories hold each: a superset of its near spellings, for ``spelling.corrections`` to sort."""
    wanted: dict[str, set[str]] = {}
    for term in terms:
        for variant in {term} | deletes(term, allowed_distance(term)):
            wanted.setdefault(variant, set()).add(term)
    found: dict[str, dict[str, int]] = {term: {} for term in terms}
    variants = sorted(wanted)
    for start in range(0, len(variants), _BATCH):
        part = variants[start : start + _BATCH]
        marks = ",".join("?" * len(part))
        rows = conn.execute(
            "SELECT d.variant, d.term, v.memories FROM vocabulary_deletes d "
            f"JOIN vocabulary v ON v.term = d.term WHERE d.variant IN ({marks})",
            part,
        )
        for variant, candidate, count in rows:
            for term in wanted[variant]:
                found[term][str(candidate)] = int(count)
    return found


def rebuild(conn: sqlite3.Connection) -> int:
    """Count the vocabulary again from every memory's kept terms (``memory_words``); the number of
    terms. Run inside the caller's transaction."""
    conn.execute("DELETE FROM vocabulary")
    conn.execute("DELETE FROM vocabulary_deletes")
    counts: dict[str, int] = {}
    for (terms,) in conn.execute("SELECT terms FROM memory_words"):
        for term in str(terms).split():
            counts[term] = counts.get(term, 0) + 1
    conn.executemany("INSERT INTO vocabulary (term, memories) VALUES (?, ?)", counts.items())
    conn.executemany(_INDEX, _variants(counts))
    return len(counts)


def _variants(terms: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(variant, term) rows of the delete index: each indexed term under itself and its spellings
    with one letter dropped."""
    for term in terms:
        if indexed(term):
            for variant in {term} | deletes(term, 1):
                yield variant, term
