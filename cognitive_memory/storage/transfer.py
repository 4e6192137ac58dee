"""SQL for export and import: reading user links, and writing a whole import in one transaction
(new memories with their ids, dates and versions; changed memories as updates that keep a version;
then the links), so a crash leaves the store as it was before or after, never half-imported."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime

from cognitive_memory.core.store.values import ImportWrite, LinkRow
from cognitive_memory.storage import associations
from cognitive_memory.storage import relations as relation_sql
from cognitive_memory.storage.browse import VersionRow
from cognitive_memory.storage.rows import insert_memories
from cognitive_memory.storage.sql import Connection
from cognitive_memory.storage.versions import rewrite_memory

__all__ = ["ImportWrite", "LinkRow", "RolledBack", "links_from", "write_import"]


class RolledBack(Exception):
    """Raised inside the transaction of a dry run so that it rolls back, carrying what it did."""

    def __init__(self, links: list[relation_sql.LinkWrite]) -> None:
        super().__init__("dry run")
        self.links = links


def links_from(conn: Connection, ids: Sequence[str]) -> dict[str, list[LinkRow]]:
    """The user links starting at each of ``ids`` (each link once, under its ``from_id``)."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        "SELECT from_id, to_id, relation, note, created_at, session_id, weight FROM relations "
        f"WHERE from_id IN ({marks}) ORDER BY from_id, created_at, to_id, relation",
        list(ids),
    ).fetchall()
    found: dict[str, list[LinkRow]] = {}
    for row in rows:
        found.setdefault(row[0], []).append(LinkRow(*row))
    return found


def write_import(
    conn: Connection, write: ImportWrite, session_id: str | None, dry_run: bool
) -> list[relation_sql.LinkWrite]:
    """Apply ``write`` inside the caller's transaction; returns what each link insert did. A
    ``dry_run`` raises RolledBack at the end, so the caller's transaction undoes it all."""
    now = datetime.now(UTC).timestamp()
    insert_memories(conn, write.added, now)
    conn.executemany(
        "INSERT INTO memory_versions (memory_id, version, content, hierarchy_level, "
        "memory_type, importance_score, tags, metadata, project, replaced_at, replaced_by_session) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        [_version_row(version) for version in write.versions],
    )
    for memory, previous in write.updated:
        rewrite_memory(conn, memory, previous, session_id, now)
        # rewrite_memory writes the editable fields; an import also moves project, source date and key.
        conn.execute(
            "UPDATE memories SET project = ?, source_date = ?, memory_key = ? WHERE id = ?",
            (
                memory.project,
                memory.source_date.isoformat() if memory.source_date else None,
                memory.key,
                memory.id,
            ),
        )
        if memory.key != previous.key:  # a key's words are the memory's (terms.keyed_text)
            associations.index_memory(conn, memory.id)
    done = [
        relation_sql.insert_link(
            conn,
            (link.from_id, link.to_id, link.relation),
            link.note,
            link.session_id,
            link.created_at,
            link.weight,
        )
        for link in write.links
    ]
    if dry_run:
        raise RolledBack(done)
    return done


def _version_row(version: VersionRow) -> tuple[object, ...]:
    return (
        version.memory_id,
        version.version,
        version.content,
        version.hierarchy_level,
        version.memory_type,
        version.importance_score,
        json.dumps(list(version.tags), ensure_ascii=False),
        json.dumps(version.metadata, ensure_ascii=False),
        version.project,
        version.replaced_at,
        version.replaced_by_session,
    )
