"""The store's vocabulary: how many memories hold each term of their own text (``vocabulary``),
and every term of letters under its spellings with one letter dropped (``vocabulary_deletes``,
a symmetric-delete index), so a query term finds its near spellings by a few point reads
instead of a scan of the vocabulary (``core/spelling.py``).

Beside it, the document frequencies recall weighs words by (``document_frequencies``): how many
memories hold each term in their own text or their neighbours' in time (the words of a memory's
lexical entry and of its sparse word vector), and how many memories there are (``documents``).

Kept in the transaction that writes a memory's terms (``words.remember_terms``,
``words.forget_terms``): they move with ``memory_words`` and cannot drift from it; migrations
0015_vocabulary and 0016_document_frequencies filled them for existing stores and ``rebuild``
fills them again from ``memory_words``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from cognitive_memory.core.spelling import allowed_distance, deletes, indexed
from cognitive_memory.storage.properties import keep
from cognitive_memory.storage.sql import Connection

__all__ = [
    "DOCUMENTS",
    "count_documents",
    "count_terms",
    "documents",
    "frequencies",
    "held",
    "near",
    "offered",
    "rebuild",
]

# The store_meta key of how many memories have their terms kept (the N of a word's rarity).
DOCUMENTS = "word_documents"

# Terms per statement: well under SQLite's limit of bound parameters.
_BATCH = 500
_STEP = "UPDATE {} SET memories = memories {} 1 WHERE term = ?"
_INDEX = "INSERT INTO vocabulary_deletes (variant, term) VALUES (?, ?) ON CONFLICT DO NOTHING"
_UNINDEX = "DELETE FROM vocabulary_deletes WHERE variant = ? AND term = ?"


def count_terms(conn: Connection, before: Iterable[str], after: Iterable[str]) -> None:
    """Count a memory's terms changing from ``before`` to ``after`` (empty for a new or a deleted
    memory): each term gained one more memory, each term lost one fewer, and the delete index
    follows the terms that appear or disappear."""
    fresh, gone = _count(conn, "vocabulary", before, after)
    conn.executemany(_INDEX, list(_variants(fresh)))
    conn.executemany(_UNINDEX, list(_variants(gone)))


def count_documents(conn: Connection, before: Iterable[str] | None, after: Iterable[str] | None) -> None:
    """Count a memory's document terms (its own and its neighbours') changing from ``before`` to
    ``after``; None for a memory that was not there before, or is no longer: the number of
    documents follows it."""
    _count(conn, "document_frequencies", before or (), after or ())
    step = (after is not None) - (before is not None)
    if step:
        conn.execute(
            "UPDATE store_meta SET value = CAST(value AS INTEGER) + ? WHERE key = ?", (step, DOCUMENTS)
        )


def _count(
    conn: Connection, table: str, before: Iterable[str], after: Iterable[str]
) -> tuple[list[str], list[str]]:
    """Count the terms of ``table`` changing from ``before`` to ``after``; (the terms new to it,
    the terms gone from it)."""
    old, new = set(before), set(after)
    added, removed = sorted(new - old), sorted(old - new)
    fresh: list[str] = []
    gone: list[str] = []
    if added:
        known = set(_held(conn, table, added))
        conn.executemany(_STEP.format(table, "+"), [(t,) for t in known])
        fresh = [term for term in added if term not in known]
        conn.executemany(f"INSERT INTO {table} (term, memories) VALUES (?, 1)", [(t,) for t in fresh])
    if removed:
        counts = _held(conn, table, removed)
        conn.executemany(_STEP.format(table, "-"), [(t,) for t in counts])
        gone = [term for term, count in counts.items() if count <= 1]
        conn.executemany(f"DELETE FROM {table} WHERE term = ?", [(t,) for t in gone])
    return fresh, gone


def held(conn: Connection, terms: Sequence[str]) -> dict[str, int]:
    """How many memories hold each of ``terms`` in their own text (terms no memory holds are left
    out)."""
    return _held(conn, "vocabulary", terms)


def frequencies(conn: Connection, terms: Sequence[str]) -> dict[str, int]:
    """How many memories hold each of ``terms`` in their own text or their neighbours' (terms no
    memory holds are left out)."""
    return _held(conn, "document_frequencies", terms)


def documents(conn: Connection) -> int:
    """How many memories have their terms kept: a point read of the count kept beside the
    document frequencies (counted when a store lacks it)."""
    row = conn.execute("SELECT value FROM store_meta WHERE key = ?", (DOCUMENTS,)).fetchone()
    if row is not None:
        return int(row[0])
    (counted,) = conn.execute("SELECT count(*) FROM memory_words").fetchone()
    return int(counted)


def _held(conn: Connection, table: str, terms: Sequence[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for start in range(0, len(terms), _BATCH):
        part = terms[start : start + _BATCH]
        marks = ",".join("?" * len(part))
        found |= {
            str(term): int(count)
            for term, count in conn.execute(
                f"SELECT term, memories FROM {table} WHERE term IN ({marks})", part
            )
        }
    return found


def near(conn: Connection, terms: Sequence[str]) -> dict[str, dict[str, int]]:
    """For each of ``terms``, the store's terms that share a spelling with it once each drops up
    to ``allowed_distance`` letters (the query's side) and one (the index's side), with how many
    memories hold each: a superset of its near spellings, for ``spelling.corrections`` to sort."""
    wanted: dict[str, set[str]] = {}
    for term in terms:
        for variant in {term} | deletes(term, allowed_distance(term)):
            wanted.setdefault(variant, set()).add(term)
    found: dict[str, dict[str, int]] = {term: {} for term in terms}
    for variant, offered_terms in offered(conn, sorted(wanted)).items():
        for term in wanted[variant]:
            found[term] |= offered_terms
    return found


def offered(conn: Connection, variants: Sequence[str]) -> dict[str, dict[str, int]]:
    """The store's terms the delete index keeps under each of ``variants`` (a term under itself and
    its spellings with one letter dropped), with how many memories hold each; variants under which
    it keeps none are left out."""
    found: dict[str, dict[str, int]] = {}
    for start in range(0, len(variants), _BATCH):
        part = variants[start : start + _BATCH]
        marks = ",".join("?" * len(part))
        rows = conn.execute(
            "SELECT d.variant, d.term, v.memories FROM vocabulary_deletes d "
            f"JOIN vocabulary v ON v.term = d.term WHERE d.variant IN ({marks})",
            part,
        )
        for variant, term, count in rows:
            found.setdefault(str(variant), {})[str(term)] = int(count)
    return found


def rebuild(conn: Connection) -> int:
    """Count the vocabulary and the document frequencies again from every memory's kept terms
    (``memory_words``); the number of terms in the vocabulary. Run inside the caller's transaction."""
    conn.execute("DELETE FROM vocabulary")
    conn.execute("DELETE FROM vocabulary_deletes")
    conn.execute("DELETE FROM document_frequencies")
    counts: dict[str, int] = {}
    frequencies: dict[str, int] = {}
    total = 0
    for terms, context in conn.execute("SELECT terms, context FROM memory_words"):
        own = str(terms).split()
        for term in own:
            counts[term] = counts.get(term, 0) + 1
        for term in set(own).union(str(context).split()):
            frequencies[term] = frequencies.get(term, 0) + 1
        total += 1
    conn.executemany("INSERT INTO vocabulary (term, memories) VALUES (?, ?)", counts.items())
    conn.executemany(_INDEX, _variants(counts))
    conn.executemany("INSERT INTO document_frequencies (term, memories) VALUES (?, ?)", frequencies.items())
    keep(conn, DOCUMENTS, str(total))
    return len(counts)


def _variants(terms: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(variant, term) rows of the delete index: each indexed term under itself and its spellings
    with one letter dropped."""
    for term in terms:
        if indexed(term):
            for variant in {term} | deletes(term, 1):
                yield variant, term
