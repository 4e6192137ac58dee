"""SQL for the lexical index and the connection graph, run inside the store's transactions."""

from __future__ import annotations

import re
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence

from cognitive_memory.core.links import Graph
from cognitive_memory.core.store.values import NeighbourRow
from cognitive_memory.core.terms import keyed_text, terms
from cognitive_memory.storage import outbox, words
from cognitive_memory.storage.sql import EVERY_ROW, Connection

__all__ = [
    "CO_RECALL_LINKS",
    "CO_RECALL_STEP",
    "TEMPORAL_NEIGHBOURS",
    "TEMPORAL_WINDOW_SECONDS",
    "connect",
    "every_neighbourhood",
    "NeighbourRow",
    "neighbourhood",
    "query_words",
    "text_words",
    "index_memory",
    "link_in_time",
    "strengthen",
    "lexical_texts",
    "write_lexical_entry",
]

# A memory is linked to the previous two stored in the same session, if they are at most six
# hours older: conversations and work sessions are told in sequence.
TEMPORAL_NEIGHBOURS = 2
TEMPORAL_WINDOW_SECONDS = 6 * 3600
# Each recall that returns two memories together as core adds this to the weight of their link.
CO_RECALL_STEP = 0.1
# Each memory keeps its 16 most recently strengthened co-recall links: without a cap every recall
# adds links, and a store read more links per recall (and recalled slower) the more it was used.
CO_RECALL_LINKS = 16

_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "about",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "what",
        "when",
        "where",
        "who",
        "whom",
        "which",
        "why",
        "how",
        "that",
        "this",
        "these",
        "those",
        "it",
        "its",
        "i",
        "you",
        "he",
        "she",
        "they",
        "we",
        "me",
        "him",
        "her",
        "them",
        "my",
        "your",
        "his",
        "their",
        "our",
        "from",
        "into",
        "than",
        "then",
        "so",
        "not",
        "no",
        "yes",
        "can",
        "could",
        "would",
        "should",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "there",
        "here",
        "just",
        "also",
        "very",
        "too",
        "up",
        "down",
        "out",
        "over",
        "under",
        "again",
        "further",
        "once",
        "all",
        "any",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "only",
        "own",
        "same",
        "s",
        "t",
        "don",
        "now",
    ]
)
_TOKEN = re.compile(r"\w+", re.UNICODE)
# 1 for a connection that is not a link in time, else 0 (an integer, as a relation's 1 beside it).
_NOT_IN_TIME = "CASE WHEN kind != 'temporal' THEN 1 ELSE 0 END"


def query_words(text: str) -> list[str]:
    """The text's distinct words, lower-cased, stopwords dropped, in order."""
    return list(dict.fromkeys(t for t in _TOKEN.findall(text.lower()) if t not in _STOPWORDS))


def text_words(text: str) -> list[str]:
    """The text's distinct words, lower-cased, in order, stopwords kept."""
    return list(dict.fromkeys(_TOKEN.findall(text.lower())))


def index_memory(conn: Connection, memory_id: str) -> None:
    """(Re)write the memory's FTS row (its content with its key, ``terms.keyed_text``, and its
    temporal neighbours' content as context) and queue the write of its vector, whose words come
    from the same texts."""
    rowid, own, texts = lexical_texts(conn, memory_id)
    write_lexical_entry(conn, rowid, own, "\n".join(texts))
    words.remember_terms(conn, rowid, own, texts)
    # Its words changed (its own or a neighbour's): its sparse word vector is written again.
    outbox.queue(conn, [(memory_id, "upsert", time.time())])


def lexical_texts(conn: Connection, memory_id: str) -> tuple[int, str, list[str]]:
    """(rowid, its own text with its key, its temporal neighbours' texts): what a memory's words
    are made of."""
    rowid, content, key = conn.execute(
        "SELECT rowid, content, memory_key FROM memories WHERE id = ?", (memory_id,)
    ).fetchone()
    neighbours = conn.execute(
        "SELECT m.content FROM connections c JOIN memories m ON m.id = c.target_id "
        "WHERE c.source_id = ? AND c.kind = 'temporal' ORDER BY m.rowid",
        (memory_id,),
    ).fetchall()
    return int(rowid), keyed_text(content, key), [str(content) for (content,) in neighbours]


# PostgreSQL's stand-in for what FTS5 counts of an entry: its columns' lengths in terms.
_LENGTHS = (
    "INSERT INTO memory_lengths (memory_rowid, content, context) VALUES (?, ?, ?) "
    "ON CONFLICT (memory_rowid) DO UPDATE SET content = excluded.content, context = excluded.context"
)


def write_lexical_entry(conn: Connection, rowid: int, content: str, context: str) -> None:
    """(Re)write the lexical index's (FTS5's) entry of the memory of ``rowid``: its own text and its
    neighbours' (``context``), the columns word search scores. SQLite's full-text index alone; on
    PostgreSQL, which has none (word search is the vector index's), the entry's lengths in terms,
    which the word vectors' average length is read from (``word_documents.average_length``)."""
    if conn.dialect.postgres:
        conn.execute(_LENGTHS, (rowid, len(terms(content)), len(terms(context))))
        return
    conn.execute("DELETE FROM memory_fts WHERE rowid = ?", (rowid,))
    conn.execute(
        "INSERT INTO memory_fts (rowid, content, context) VALUES (?, ?, ?)", (rowid, content, context)
    )


def link_in_time(conn: Connection, memory_id: str, session_id: str | None, at: float) -> list[str]:
    """Link a just-inserted memory to its predecessors in the session; return their ids."""
    if session_id is None:
        return []
    rows = conn.execute(
        "SELECT id FROM memories WHERE session_id = ? AND id != ? AND timestamp >= ? "
        "AND rowid < (SELECT rowid FROM memories WHERE id = ?) ORDER BY rowid DESC LIMIT ?",
        (session_id, memory_id, at - TEMPORAL_WINDOW_SECONDS, memory_id, TEMPORAL_NEIGHBOURS),
    ).fetchall()
    previous = [row[0] for row in rows]
    connect(
        conn,
        [(memory_id, other, 1.0 / offset) for offset, other in enumerate(previous, start=1)],
        "temporal",
        at,
    )
    return previous


def connect(conn: Connection, edges: Iterable[tuple[str, str, float]], kind: str, at: float) -> None:
    """Insert undirected edges (stored in both directions); an existing edge keeps the larger weight."""
    rows = [(a, b, kind, weight, at) for x, y, weight in edges for a, b in ((x, y), (y, x))]
    conn.executemany(
        "INSERT INTO connections (source_id, target_id, kind, weight, updated_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (source_id, target_id, kind) DO UPDATE SET "
        "weight = CASE WHEN excluded.weight > connections.weight THEN excluded.weight "
        "ELSE connections.weight END, "
        "updated_at = excluded.updated_at",
        rows,
    )


def strengthen(
    conn: Connection,
    pairs: Sequence[tuple[str, str]],
    at: float,
    step: float = CO_RECALL_STEP,
    keep: int = CO_RECALL_LINKS,
) -> None:
    """Add ``step`` to co-recall edges (creating them), capped at 1.0, in both directions; then
    each memory of ``pairs`` keeps only its ``keep`` most recently strengthened co-recall links,
    so the graph a recall reads stays bounded however often memories are recalled together."""
    rows = [(a, b, step, at) for x, y in pairs for a, b in ((x, y), (y, x))]
    conn.executemany(
        "INSERT INTO connections (source_id, target_id, kind, weight, updated_at) "
        "VALUES (?, ?, 'co_recall', ?, ?) ON CONFLICT (source_id, target_id, kind) DO UPDATE SET "
        "weight = CASE WHEN connections.weight + excluded.weight < 1.0 "
        "THEN connections.weight + excluded.weight ELSE 1.0 END, "
        "updated_at = excluded.updated_at",
        rows,
    )
    stale = [
        (memory_id, other)
        for memory_id in dict.fromkeys(a for pair in pairs for a in pair)
        for (other,) in conn.execute(
            "SELECT target_id FROM connections WHERE source_id = ? AND kind = 'co_recall' "
            "ORDER BY updated_at DESC, weight DESC LIMIT ? OFFSET ?",
            (memory_id, EVERY_ROW, keep),
        )
    ]
    conn.executemany(
        "DELETE FROM connections WHERE kind = 'co_recall' AND "
        "((source_id = ? AND target_id = ?) OR (source_id = ? AND target_id = ?))",
        [(a, b, b, a) for a, b in stale],
    )


def neighbourhood(conn: Connection, ids: Sequence[str]) -> tuple[Graph, Graph]:
    """Each id's linked memories with the strongest weight over link kinds (a user link counts its
    own weight in both directions; one of weight 0 not at all) and, beside it, the same without
    links in time (pairs linked only in time left out)."""
    if not ids:
        return {}, {}
    # The ids are bound once per select: numbered parameters (bound once, read by every select)
    # are SQLite's alone. The strongest weights are taken here rather than by a GROUP BY: SQLite
    # sorting ~700 rows cost more.
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        f"SELECT source_id, target_id, weight, {_NOT_IN_TIME} FROM connections "
        f"WHERE source_id IN ({marks}) UNION ALL SELECT from_id, to_id, weight, 1 FROM relations "
        f"WHERE from_id IN ({marks}) AND weight > 0 UNION ALL SELECT to_id, from_id, weight, 1 "
        f"FROM relations WHERE to_id IN ({marks}) AND weight > 0",
        [*ids, *ids, *ids],
    )
    best: defaultdict[str, dict[str, float]] = defaultdict(dict)
    untimed: defaultdict[str, dict[str, float]] = defaultdict(dict)
    for source, target, value, not_in_time in rows:  # weights are positive
        edges = best[source]
        if value > edges.get(target, 0.0):
            edges[target] = value
        if not_in_time:
            edges = untimed[source]
            if value > edges.get(target, 0.0):
                edges[target] = value
    # Each memory's links by target id (ties in weight keep that order wherever they are sorted).
    graph: Graph = {source: sorted(edges.items()) for source, edges in best.items()}
    timeless: Graph = {source: sorted(edges.items()) for source, edges in untimed.items()}
    return graph, timeless


def every_neighbourhood(conn: Connection) -> Iterator[NeighbourRow]:
    """Every linked pair as ``neighbourhood`` weighs it, by memory then neighbour id (the order
    ``neighbourhood`` sorts each memory's links in), read as they are taken."""
    yield from conn.execute(
        "SELECT source, target, max(weight), max(CASE WHEN not_in_time = 1 THEN weight END) FROM ("
        f"SELECT source_id AS source, target_id AS target, weight, {_NOT_IN_TIME} AS not_in_time "
        "FROM connections UNION ALL SELECT from_id, to_id, weight, 1 FROM relations WHERE weight > 0 "
        "UNION ALL SELECT to_id, from_id, weight, 1 FROM relations WHERE weight > 0) AS links "
        "GROUP BY source, target ORDER BY source, target"
    )
