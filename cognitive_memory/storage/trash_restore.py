"""Restoring from the trash: a memory comes back from one of its entries with its versions, links
and connections; its other entries become versions, and a link that would close a supersedes
cycle stays out. Runs inside one of the store's transactions."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cognitive_memory.core.memory import shown_metadata
from cognitive_memory.core.store.values import Restored, SkippedLink
from cognitive_memory.storage import associations
from cognitive_memory.storage.relations import USER_LINK_WEIGHT, supersedes_chain
from cognitive_memory.storage.rows import queue_vector_writes
from cognitive_memory.storage.sql import Connection, column_names

__all__ = ["CONNECTION_COLUMNS", "RELATION_COLUMNS", "VERSION_COLUMNS", "Restored", "SkippedLink", "restore"]

# What a trash entry keeps of a memory's links, versions and connections, in this order (entries
# made before links had weights lack ``weight``: theirs is USER_LINK_WEIGHT).
RELATION_COLUMNS = ("from_id", "to_id", "relation", "note", "created_at", "session_id", "weight")
VERSION_COLUMNS = (
    "memory_id, version, content, hierarchy_level, memory_type, importance_score, tags, metadata, "
    "project, replaced_at, replaced_by_session"
)
CONNECTION_COLUMNS = ("source_id", "target_id", "kind", "weight", "updated_at")


@dataclass(frozen=True, slots=True)
class _Entry:
    entry: int
    memory_id: str
    row: str
    embedding: bytes
    relations: str
    versions: str
    connections: str


_ENTRY_COLUMNS = "entry, id, row, embedding, relations, versions, connections"


def restore(conn: Connection, ids: Sequence[str], entries: Sequence[int], now: float) -> Restored:
    """Put trashed memories back with their ids, versions, and the links and connections whose
    other end exists (a supersedes link that would close a cycle is skipped); re-index their words
    and queue their vectors. ``entries`` names trash entries, ``ids`` memories (their newest entry).
    The other entries of a restored memory become its versions, so no text it had is lost.
    Entries not in the trash are left out of the answer; a memory whose id is in use stays there."""
    chosen = _chosen(conn, ids, entries)
    in_use = _existing(conn, [entry.memory_id for entry in chosen])
    back = [entry for entry in chosen if entry.memory_id not in in_use]
    columns = set(column_names(conn.execute("SELECT * FROM memories LIMIT 0"))) - {"rowid"}
    folded, unkeyed = [], []
    for entry in back:
        fields = {name: value for name, value in json.loads(entry.row).items() if name in columns}
        fields["embedding"] = entry.embedding
        if fields.get("memory_key") is not None and _key_taken(conn, fields):
            fields["memory_key"] = None
            unkeyed.append(entry.memory_id)
        conn.execute(
            f"INSERT INTO memories ({', '.join(fields)}) VALUES ({', '.join('?' * len(fields))})",
            list(fields.values()),
        )
        versions, others = _history(conn, entry)
        conn.executemany(
            f"INSERT INTO memory_versions ({VERSION_COLUMNS}) VALUES ({', '.join('?' * 11)}) "
            "ON CONFLICT DO NOTHING",
            versions,
        )
        folded += others
        conn.execute("DELETE FROM trash WHERE id = ?", (entry.memory_id,))
    restored = [entry.memory_id for entry in back]
    skipped = _relink_relations(conn, [json.loads(entry.relations) for entry in back])
    _relink(conn, [json.loads(entry.connections) for entry in back], "connections", CONNECTION_COLUMNS)
    _reindex(conn, restored)
    queue_vector_writes(conn, restored, "upsert", now)
    return Restored(
        restored=[(entry.entry, entry.memory_id) for entry in back],
        in_use=[(entry.entry, entry.memory_id) for entry in chosen if entry.memory_id in in_use],
        folded=folded,
        skipped_links=skipped,
        unkeyed=unkeyed,
    )


def _key_taken(conn: Connection, fields: dict[str, Any]) -> bool:
    """True when a live memory of the trashed row's project holds its key."""
    found = conn.execute(
        "SELECT 1 FROM memories WHERE project = ? AND memory_key = ?",
        (fields.get("project", "default"), fields["memory_key"]),
    )
    return found.fetchone() is not None


def _chosen(conn: Connection, ids: Sequence[str], entries: Sequence[int]) -> list[_Entry]:
    """The entries asked for, then the newest entry of each id asked for: one per memory id (the
    first asked wins), in the order asked."""
    by_entry = _entries(conn, "entry IN ({marks})", list(entries))
    newest = _entries(
        conn, "entry IN (SELECT max(entry) FROM trash WHERE id IN ({marks}) GROUP BY id)", list(ids)
    )
    newest_of = {entry.memory_id: entry for entry in newest.values()}
    ordered = [by_entry[n] for n in entries if n in by_entry]
    ordered += [newest_of[memory_id] for memory_id in ids if memory_id in newest_of]
    chosen: dict[str, _Entry] = {}
    for entry in ordered:
        chosen.setdefault(entry.memory_id, entry)
    return list(chosen.values())


def _entries(conn: Connection, where: str, params: list[Any]) -> dict[int, _Entry]:
    if not params:
        return {}
    rows = conn.execute(
        f"SELECT {_ENTRY_COLUMNS} FROM trash WHERE {where.format(marks=','.join('?' * len(params)))}",
        params,
    ).fetchall()
    return {row[0]: _Entry(*row) for row in rows}


def _history(conn: Connection, entry: _Entry) -> tuple[list[list[Any]], list[int]]:
    """The versions to restore with ``entry``, and the other entries of its memory folded into them.

    Each other entry gives its versions and its own state (replaced when it went to the trash);
    a version met twice (an export carries versions, an import brings them back) is kept once, and
    all are numbered again by when they were replaced."""
    own = [list(version) for version in json.loads(entry.versions)]
    others = conn.execute(
        "SELECT entry, row, versions, trashed_at, trashed_by FROM trash WHERE id = ? AND entry != ? "
        "ORDER BY entry",
        (entry.memory_id, entry.entry),
    ).fetchall()
    if not others:
        return own, []
    versions = {_state(version): version for version in own}
    for _, row, saved, trashed_at, trashed_by in others:
        for version in [*json.loads(saved), _as_version(json.loads(row), trashed_at, trashed_by)]:
            versions.setdefault(_state(version), list(version))
    history = sorted(versions.values(), key=lambda version: (version[9], version[1]))
    return [[entry.memory_id, number, *version[2:]] for number, version in enumerate(history, 1)], [
        other[0] for other in others
    ]


def _state(version: Sequence[Any]) -> tuple[Any, ...]:
    """A version without its number: what it held, when it was replaced and by which session."""
    return tuple(version[2:])


def _as_version(fields: dict[str, Any], trashed_at: float, trashed_by: str | None) -> list[Any]:
    """A memory's row as the version it became when it went to the trash."""
    return [
        fields["id"],
        0,
        fields["content"],
        fields["hierarchy_level"],
        fields["memory_type"],
        fields["importance_score"],
        fields["tags"],
        _shown(fields),
        fields.get("project", "default"),
        trashed_at,
        trashed_by,
    ]


def _shown(fields: dict[str, Any]) -> Any:
    """A trashed row's metadata as versions keep it: with its source kind, speaker and origin."""
    columns = (fields.get("loader_type"), fields.get("speaker"), fields.get("origin"))
    if columns == (None, None, None):
        return fields["metadata"]
    return json.dumps(shown_metadata(json.loads(fields["metadata"]), *columns), ensure_ascii=False)


def _relink_relations(conn: Connection, groups: Sequence[list[list[Any]]]) -> list[SkippedLink]:
    """Insert the saved links whose two ends exist, oldest first, except a supersedes link that
    would close a cycle (``link_memories`` refuses those too); returns the links skipped so."""
    saved = (
        tuple(row) + (USER_LINK_WEIGHT,) * (len(RELATION_COLUMNS) - len(row)) for g in groups for row in g
    )
    rows = sorted(dict.fromkeys(saved), key=lambda row: row[4])
    present = _existing(conn, list({end for row in rows for end in row[:2]}))
    skipped = []
    for row in rows:
        from_id, to_id, relation = row[:3]
        if from_id not in present or to_id not in present:
            continue
        cycle = supersedes_chain(conn, to_id, from_id) if relation == "supersedes" else ()
        if cycle:
            skipped.append(SkippedLink(from_id, to_id, relation, cycle))
            continue
        conn.execute(
            f"INSERT INTO relations ({', '.join(RELATION_COLUMNS)}) VALUES "
            f"({', '.join('?' * len(RELATION_COLUMNS))}) ON CONFLICT DO NOTHING",
            row,
        )
    return skipped


def _existing(conn: Connection, ids: Sequence[str]) -> set[str]:
    if not ids:
        return set()
    marks = ",".join("?" * len(ids))
    return {row[0] for row in conn.execute(f"SELECT id FROM memories WHERE id IN ({marks})", list(ids))}


def _relink(conn: Connection, groups: Sequence[list[list[Any]]], table: str, columns: Sequence[str]) -> None:
    """Insert the saved rows of ``table`` whose two ends (its first two columns) exist now."""
    rows = [tuple(row) for group in groups for row in group]
    present = _existing(conn, list({end for row in rows for end in row[:2]}))
    conn.executemany(
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) "
        "ON CONFLICT DO NOTHING",
        [row for row in rows if row[0] in present and row[1] in present],
    )


def _reindex(conn: Connection, ids: Sequence[str]) -> None:
    """Write the lexical entries of restored memories and of their neighbours in time."""
    if not ids:
        return
    marks = ",".join("?" * len(ids))
    neighbours = {
        row[0]
        for row in conn.execute(
            f"SELECT target_id FROM connections WHERE source_id IN ({marks}) AND kind = 'temporal'", list(ids)
        )
    }
    for memory_id in sorted(set(ids) | neighbours):
        associations.index_memory(conn, memory_id)
