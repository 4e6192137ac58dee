"""Browsing memories without a query: a filtered, ordered page, and the earlier versions of memories.

Pages use keyset pagination on (order value, rowid), highest first, a missing value (a memory
never accessed) last: a page starts strictly after the last row of the previous one, so memories
stored meanwhile never make a page repeat or skip one. A text filter whose words were corrected
(``TextMatch``) lists the memories holding the words as typed first: the key starts with that
tier. The key goes out in the page's opaque cursor (``core/store/cursors.py``) as
``{"v": order value, "r": rowid}``, and ``"t": 1`` for that first tier.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cognitive_memory.core.store.cursors import bad_cursor, cursor_of, position_in
from cognitive_memory.core.store.values import MemoryPage, TextMatch, VersionRow
from cognitive_memory.core.terms import terms
from cognitive_memory.index.vector_store import VectorFilter
from cognitive_memory.storage.dialect import Dialect
from cognitive_memory.storage.sql import Connection

__all__ = [
    "ORDER_COLUMNS",
    "MemoryPage",
    "PageKey",
    "RowPage",
    "TextMatch",
    "VersionRow",
    "filter_sql",
    "matching_rowids",
    "matching_sql",
    "page_rows",
    "page_key",
    "versions_of",
]

# order_by name -> the memories column it sorts on (descending).
ORDER_COLUMNS = {
    "created": "timestamp",
    "last_accessed": "last_accessed",
    "importance": "importance_score",
    "access_count": "access_count",
}

_IN_COLUMNS = (
    ("hierarchy_levels", "hierarchy_level"),
    ("memory_types", "memory_type"),
    ("loader_types", "loader_type"),
    ("projects", "project"),
    ("sessions", "session_id"),
)


# A cursor's fields: the last row's order value, its rowid, and its tier when 1.
_KEY_FIELDS = frozenset({"v", "r", "t"})
# SQLite integers are signed 64-bit; a larger number cannot even be bound as a parameter.
_INT_LIMIT = 2**63


@dataclass(frozen=True, slots=True)
class PageKey:
    """Where a page ended: the last row's order value (None: never accessed) and rowid, and its
    tier (1: an exact match of a corrected text filter, listed before the others)."""

    value: float | None
    rowid: int
    tier: int = 0

    def cursor(self, order_by: str) -> str:
        """The opaque cursor of the page after this key in ``order_by``."""
        fields: dict[str, Any] = {"v": self.value, "r": self.rowid}
        if self.tier:
            fields["t"] = self.tier
        return cursor_of(order_by, fields)


def page_key(cursor: str, order_by: str) -> PageKey:
    """The key ``cursor`` holds; refused (``invalid_cursor``) unless ``PageKey.cursor`` made it for
    ``order_by``."""
    fields = position_in(cursor, order_by, _KEY_FIELDS)
    value, rowid, tier = fields.get("v", ...), fields.get("r", ...), fields.get("t", 0)
    if not _is_int(rowid) or not _is_value(value) or tier not in (0, 1):
        raise bad_cursor()
    return PageKey(value, int(rowid), int(tier))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -_INT_LIMIT <= value < _INT_LIMIT


def _is_value(value: Any) -> bool:
    if value is None or _is_int(value):
        return True
    return isinstance(value, float) and math.isfinite(value)


# The memories holding a caller's field (name, kind, value): migration 0020's table.
_HOLDING_FIELD = "SELECT memory_id FROM memory_fields WHERE name = ? AND kind = ? AND value = ?"


# PostgreSQL's memory_fields.value is jsonb (a boolean as 0 or 1): the value bound is made one,
# from the SQL type of its kind.
_FIELD_TYPES = {"text": "text", "number": "double precision", "bool": "integer"}


def holding_field(kind: str, dialect: Dialect) -> str:
    """A SELECT of the memories holding the caller's field bound next as (name, kind, value)."""
    if not dialect.postgres:
        return _HOLDING_FIELD
    return _HOLDING_FIELD.replace("value = ?", f"value = to_jsonb(CAST(? AS {_FIELD_TYPES[kind]}))")


@dataclass(frozen=True, slots=True)
class RowPage:
    """Rows of one page (the caller's columns), how many rows match in all, and the key to pass
    for the next page (None on the last page)."""

    rows: list[tuple[Any, ...]]
    total: int
    next_key: PageKey | None


def filter_sql(where: VectorFilter, dialect: Dialect) -> tuple[str, list[Any]]:
    """``where`` as a SQL condition on ``memories`` with its parameters (``TRUE`` when empty). With
    caller's fields to match, the other columns are written ``+column`` (``dialect.unindexed``),
    which keeps SQLite off their indexes: the rows holding the fields (``memory_fields``) are then
    where it starts, rather than every memory of the project checked against them (0.13 against
    23 ms for 10 of 10,000)."""
    clauses: list[str] = []
    params: list[Any] = []

    def column_of(name: str) -> str:
        return dialect.unindexed(name) if where.metadata else name

    for name, column in _IN_COLUMNS:
        values: tuple[Any, ...] = getattr(where, name)
        if values:
            clauses.append(f"{column_of(column)} IN ({','.join('?' * len(values))})")
            params += values
    if where.tags:
        marks = ",".join("?" * len(where.tags))
        tags = dialect.list_items(dialect.tags_list("memories.tags"), "tag")
        clauses.append(f"EXISTS (SELECT 1 FROM {tags} WHERE tag.value IN ({marks}))")
        params += where.tags
    for field in where.metadata:
        clauses.append(f"id IN ({holding_field(field[1], dialect)})")
        params += field
    if where.created_after is not None:
        clauses.append(f"{column_of('timestamp')} >= ?")
        params.append(where.created_after)
    if where.created_before is not None:
        clauses.append(f"{column_of('timestamp')} < ?")
        params.append(where.created_before)
    return " AND ".join(clauses) or "TRUE", params


def matching_sql(where: VectorFilter, text: TextMatch | None, dialect: Dialect) -> tuple[str, list[Any]]:
    """The memories matching ``where`` and, if given, holding ``text``'s words (with corrections)."""
    condition, params = filter_sql(where, dialect)
    if text is None:
        return condition, params
    expression = lexical_expression(text.loose or text.exact, dialect)
    return f"{condition} AND rowid IN ({matching_rowids(dialect)})", [*params, expression]


def _after_sql(column: str, after: PageKey) -> tuple[str, list[Any]]:
    """Rows that sort after ``after`` in ``column`` DESC (NULLs last), rowid DESC."""
    if after.value is None:
        return f"({column} IS NULL AND rowid < ?)", [after.rowid]
    return (
        f"({column} < ? OR ({column} = ? AND rowid < ?) OR {column} IS NULL)",
        [after.value, after.value, after.rowid],
    )


def page_rows(
    conn: Connection,
    columns: str,
    where: VectorFilter,
    order_by: str,
    limit: int,
    after: PageKey | None = None,
    text: TextMatch | None = None,
) -> RowPage:
    """Up to ``limit`` rows of ``columns`` matching ``where`` (and ``text``), highest ``order_by``
    first (exact text matches before corrected ones), starting after ``after``. ``order_by`` is a
    key of ORDER_COLUMNS."""
    column = ORDER_COLUMNS[order_by]
    condition, params = matching_sql(where, text, conn.dialect)
    tier, tier_params = (
        (
            f"CASE WHEN rowid IN ({matching_rowids(conn.dialect)}) THEN 1 ELSE 0 END",
            [lexical_expression(text.exact, conn.dialect)],
        )
        if text and text.loose
        else ("0", [])
    )
    total = conn.execute(f"SELECT COUNT(*) FROM memories WHERE {condition}", params).fetchone()[0]
    if after is not None:
        keyset, keyset_params = _after_sql(column, after)
        condition = f"{condition} AND ({tier} < ? OR ({tier} = ? AND {keyset}))"
        params = [*params, *tier_params, after.tier, *tier_params, after.tier, *keyset_params]
    # Sort keys only, then read the page's rows: sorting whole rows (a 1.5 kB vector each) costs
    # ten times as much in a large store (docs/performance.md: "Measurements behind the code").
    keys = conn.execute(
        f"SELECT {column}, rowid, {tier} AS tier FROM memories WHERE {condition} "
        f"ORDER BY tier DESC, {column} IS NULL, {column} DESC, rowid DESC LIMIT ?",
        [*tier_params, *params, limit + 1],
    ).fetchall()
    page = [rowid for _, rowid, _ in keys[:limit]]
    next_key = PageKey(*keys[limit - 1]) if len(keys) > limit else None
    return RowPage(_rows_by_rowid(conn, columns, page), int(total), next_key)


def matching_rowids(dialect: Dialect) -> str:
    """A SELECT of the rowids of the memories the lexical index (FTS5) matches to the expression
    bound next (``TextMatch``'s, ``lexical.Words.text_match``). SQLite's full-text index alone; on
    PostgreSQL, the memories whose kept terms (``memory_words.terms``, their own text's) the
    expression's every group holds one of (``lexical_match``, its schema's)."""
    if dialect.postgres:
        return "SELECT memory_rowid FROM memory_words WHERE lexical_match(terms, ?)"
    return "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?"


def lexical_expression(expression: str, dialect: Dialect) -> str:
    """The FTS5 expression of a text filter as ``matching_rowids`` binds it: as it is for FTS5,
    which tokenizes each quoted word itself; for PostgreSQL's ``lexical_match``, which compares
    terms, each quoted word as its terms (``core.terms.terms``, FTS5's tokenizer), space-separated."""
    if not dialect.postgres:
        return expression
    return _QUOTED.sub(lambda word: '"' + " ".join(terms(word.group(1))) + '"', expression)


_QUOTED = re.compile(r'"([^"]*)"')


def _rows_by_rowid(conn: Connection, columns: str, rowids: list[int]) -> list[tuple[Any, ...]]:
    """Rows of ``columns`` for these rowids, in their order (one another process deleted
    since its key was read is left out)."""
    if not rowids:
        return []
    marks = ",".join("?" * len(rowids))
    found = conn.execute(f"SELECT rowid, {columns} FROM memories WHERE rowid IN ({marks})", rowids)
    by_rowid = {row[0]: tuple(row[1:]) for row in found}
    return [by_rowid[rowid] for rowid in rowids if rowid in by_rowid]


def versions_of(conn: Connection, ids: Sequence[str]) -> dict[str, list[VersionRow]]:
    """The earlier versions of each of ``ids`` that has any, oldest first."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        "SELECT memory_id, version, content, hierarchy_level, memory_type, importance_score, tags, "
        "metadata, project, replaced_at, replaced_by_session FROM memory_versions "
        f"WHERE memory_id IN ({marks}) ORDER BY memory_id, version",
        list(ids),
    ).fetchall()
    found: dict[str, list[VersionRow]] = {}
    for memory_id, version, content, level, kind, importance, tags, metadata, *rest in rows:
        found.setdefault(memory_id, []).append(
            VersionRow(
                memory_id,
                version,
                content,
                level,
                kind,
                importance,
                tuple(json.loads(tags)),
                json.loads(metadata),
                *rest,
            )
        )
    return found
