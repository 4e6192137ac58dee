"""The SQL fragments that have no form SQLite 3.40 and PostgreSQL 15 both accept.

The repositories write common SQL; where none exists they ask the connection's dialect
(``Connection.dialect``, ``storage/sql.py``) for the fragment: ``SQLITE`` for the embedded store,
``POSTGRES`` for a team's. Each fragment has the same effect on both, except where its method says
otherwise. The full-text index (FTS5) is not here: its statements are gathered behind their own
functions (``lexical``, ``browse``, ``associations``, ``rows``, ``word_documents``).

PostgreSQL's forms rely on its schema holding every JSON column (``tags``, ``metadata``) as text
that parses, checked as it is written, and ``embedding`` as ``bytea``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["POSTGRES", "SQLITE", "Dialect"]


@dataclass(frozen=True, slots=True)
class Dialect:
    """One database's forms of the fragments below (``name``: ``sqlite`` or ``postgresql``)."""

    name: str

    @property
    def postgres(self) -> bool:
        return self.name == "postgresql"

    def json_valid(self, column: str) -> str:
        """A condition: ``column`` holds JSON that parses (PostgreSQL's schema checks it on write)."""
        return f"({column} IS NOT NULL)" if self.postgres else f"json_valid({column})"

    def holds_bytes(self, column: str) -> str:
        """A condition: ``column`` holds bytes (SQLite's columns take any type; ``bytea`` only bytes)."""
        return f"({column} IS NOT NULL)" if self.postgres else f"typeof({column}) = 'blob'"

    def tags_list(self, column: str) -> str:
        """``column``'s JSON as text when it is a JSON list, else ``'[]'``: a memory's tags as a
        list whatever a row no command wrote holds."""
        if self.postgres:
            return f"CASE WHEN jsonb_typeof(CAST({column} AS jsonb)) = 'array' THEN {column} ELSE '[]' END"
        return (
            f"COALESCE(CASE WHEN json_valid({column}) THEN CASE json_type({column}) "
            f"WHEN 'array' THEN {column} END END, '[]')"
        )

    def list_items(self, json_list: str, alias: str) -> str:
        """A FROM item: one row per item of the JSON list ``json_list`` (text), its text as
        ``alias.value``."""
        if self.postgres:
            return f"jsonb_array_elements_text(CAST({json_list} AS jsonb)) AS {alias}(value)"
        return f"json_each({json_list}) AS {alias}"

    def unindexed(self, column: str) -> str:
        """``column`` written so that SQLite's planner leaves its indexes alone (``+column``);
        PostgreSQL's planner weighs them by its statistics, and ``+`` is no text operator there."""
        return column if self.postgres else f"+{column}"

    def prefix_like(self, column: str) -> str:
        """A condition: ``column`` matches the LIKE pattern bound next (``\\`` escapes), ASCII
        letters of either case alike as SQLite's LIKE takes them (PostgreSQL's ILIKE folds every
        letter's case, not only ASCII's)."""
        operator = "ILIKE" if self.postgres else "LIKE"
        return f"{column} {operator} ? ESCAPE '\\'"

    def keeping_identity(self) -> str:
        """What an INSERT says between its columns and ``VALUES`` to write its own value into an
        identity column (PostgreSQL's ``GENERATED ALWAYS``; nothing in SQLite)."""
        return " OVERRIDING SYSTEM VALUE" if self.postgres else ""

    def identity_caught_up(self, table: str, column: str) -> str | None:
        """A statement that makes ``table``'s identity ``column`` go on past the largest value
        written into it by hand; None where the next value follows the largest by itself
        (SQLite's rowid and AUTOINCREMENT)."""
        if not self.postgres:
            return None
        return (
            f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
            f"COALESCE((SELECT max({column}) FROM {table}), 0) + 1, false)"
        )

    def as_key(self, value: str) -> str:
        """``value`` (a placeholder, a literal) as text of the order of the schema's ids and keys:
        PostgreSQL's schema gives them the ``C`` collation, which a recursive query's first term
        must state where it takes no column (SQLite's text compares bytes whatever it is)."""
        return f'CAST({value} AS TEXT) COLLATE "C"' if self.postgres else value


SQLITE = Dialect("sqlite")
POSTGRES = Dialect("postgresql")
