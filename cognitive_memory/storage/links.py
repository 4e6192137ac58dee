"""The links between memories: user links (``relations``) and the weighted edges recall spreads
activation over (``associations``: links in time, structure, co-recall)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import TypeVar

from cognitive_memory.core.links import Graph
from cognitive_memory.storage import associations, change_log
from cognitive_memory.storage import relations as relation_sql
from cognitive_memory.storage import transfer as transfer_sql
from cognitive_memory.storage.sql import DatabaseAccess

__all__ = ["Links"]

T = TypeVar("T")


class Links:
    """The ``relations`` and ``connections`` rows of one database."""

    def __init__(self, database: DatabaseAccess) -> None:
        self._db = database

    def link(
        self,
        link: tuple[str, str, str],
        note: str | None,
        session_id: str | None,
        weight: float | None = None,
    ) -> relation_sql.LinkWrite:
        """Add the user link ``(from_id, to_id, relation)`` of ``weight`` in one transaction, unless
        an id is missing or it would close a supersedes cycle (see ``relations.insert_link``)."""
        with self._db.transaction() as conn:
            now = datetime.now(UTC).timestamp()
            return relation_sql.insert_link(conn, link, note, session_id, now, weight)

    def unlink(self, from_id: str, to_id: str, relation: str | None = None) -> list[str]:
        """Remove the user links from ``from_id`` to ``to_id`` (of ``relation`` only, if given);
        returns the relations removed."""
        with self._db.transaction() as conn:
            return relation_sql.remove_links(conn, from_id, to_id, relation)

    def outgoing(self, ids: Sequence[str]) -> dict[str, list[transfer_sql.LinkRow]]:
        """The user links starting at each of ``ids`` (for export)."""
        return self._db.read(lambda conn: transfer_sql.links_from(conn, ids))

    def superseded_by(self, ids: Sequence[str]) -> dict[str, list[str]]:
        """For each of ``ids`` that other memories supersede, their ids (oldest link first)."""
        return self._db.read(lambda conn: relation_sql.superseded_by(conn, ids))

    def related(
        self, start: str, depth: int, relations: Sequence[str], limit: int
    ) -> relation_sql.Neighbourhood:
        """The memories linked to ``start`` within ``depth`` hops, breadth first, at most ``limit``."""
        return self._db.read(lambda conn: relation_sql.walk(conn, start, depth, relations, limit))

    def neighbours(self, ids: Sequence[str]) -> dict[str, list[tuple[str, float]]]:
        """Each id's connected memories with the strongest weight over edge kinds; a user link
        (``relations``) is an edge of its own weight in both directions."""
        return self.neighbourhood(ids)[0]

    def neighbourhood(self, ids: Sequence[str]) -> tuple[Graph, Graph]:
        """``neighbours`` and, beside it, the same graph without links in time (the strongest
        weight over the other kinds; pairs linked only in time are left out)."""
        return self._db.read(lambda conn: associations.neighbourhood(conn, ids))

    def every_neighbourhood(self, take: Callable[[int, Iterator[associations.NeighbourRow]], T]) -> T:
        """What ``take`` makes of the change log's head and every memory's ``neighbourhood`` (by
        memory, then neighbour id, read as it takes them), both in one read apart from the others
        (``DatabaseAccess.read_apart``): recalls do not wait for it."""
        return self._db.read_apart(
            lambda conn: take(
                change_log.head_in(conn),
                associations.every_neighbourhood(conn),
            )
        )

    def answers(self, ids: Sequence[str]) -> dict[str, str]:
        """For each of ``ids`` that is a conversation turn asking a question (it has a recorded
        speaker and holds a '?'), the turn stored right after it in its session (its neighbour in
        time with the next rowid, itself a turn). Notes are never questions here."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self._db.rows(
            "SELECT c.source_id, c.target_id FROM connections c "
            "JOIN memories q ON q.id = c.source_id JOIN memories a ON a.id = c.target_id "
            f"WHERE c.source_id IN ({marks}) AND c.kind = 'temporal' AND a.rowid > q.rowid "
            "AND q.content LIKE ? AND q.speaker IS NOT NULL AND a.speaker IS NOT NULL "
            "ORDER BY a.rowid DESC",
            [*ids, "%?%"],
        )
        # Later rows win: the nearest successor (smallest rowid) comes last.
        return {str(question): str(answer) for question, answer in rows}

    def connect(self, edges: Sequence[tuple[str, str, float]], kind: str) -> None:
        """Add undirected edges of ``kind`` (an existing edge keeps the larger weight)."""
        if edges:
            with self._db.transaction() as conn:
                associations.connect(conn, edges, kind, datetime.now(UTC).timestamp())

    def strengthen(
        self,
        pairs: Sequence[tuple[str, str]],
        step: float = associations.CO_RECALL_STEP,
        keep: int = associations.CO_RECALL_LINKS,
    ) -> None:
        """Strengthen co-recall edges between memories recalled together; each keeps its ``keep``
        most recently strengthened ones."""
        if pairs:
            with self._db.transaction() as conn:
                associations.strengthen(conn, pairs, datetime.now(UTC).timestamp(), step, keep)
