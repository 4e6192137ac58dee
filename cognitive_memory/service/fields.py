"""Field types several requests share: one rule each, published in every schema that uses it.

The MCP SDK applies them to tool calls; the typer commands build the same models
(``ValidationError`` becomes one ``Error:`` line).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, date, datetime, time
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field
from pydantic_core import PydanticCustomError

from cognitive_memory.core.memory import SourceKind
from cognitive_memory.core.metadata import check_fields, check_fields_filter
from cognitive_memory.core.validation import (
    CURRENT_SESSION,
    MAX_KEY_CHARS,
    MAX_PROJECT_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    check_key,
    check_project,
    check_session,
)
from cognitive_memory.errors import InvalidInputError

__all__ = [
    "DateBound",
    "Importance",
    "JsonNumber",
    "Kind",
    "Level",
    "LevelValue",
    "MemoryId",
    "KeyChange",
    "Metadata",
    "MetadataFilter",
    "MemoryKey",
    "MemoryTypeName",
    "ProjectName",
    "RecallSource",
    "SessionFilter",
    "SessionName",
    "SourceInfo",
    "Tags",
    "date_bound",
    "flag",
    "optional",
]

# Values the filters accept (one definition for the MCP schema and the facade's check).
LevelValue = Literal[0, 1, 2]
MemoryTypeName = Literal["episodic", "semantic"]
RecallSource = Literal[SourceKind.MARKDOWN, SourceKind.GIT, SourceKind.SESSION_LESSON]


def _check_project(value: str) -> str:
    """The store's rule (core.validation.check_project), as pydantic reports a field's error."""
    try:
        return check_project(value)
    except InvalidInputError:
        raise ValueError(
            "a project name is 1-100 characters without control characters or '*' "
            "(use filters.projects: ['*'] for every project)"
        ) from None


ProjectName = Annotated[
    str,
    Field(min_length=1, max_length=MAX_PROJECT_CHARS),
    AfterValidator(_check_project),
]


def date_bound(value: str) -> datetime:
    """An ISO 8601 date or date-time as an aware datetime (UTC when no offset is given); a date
    alone means the start of that day in UTC."""
    text = value.strip()
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), time(), UTC)
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError(
            f"{value!r} is not an ISO 8601 date (2024-05-01) or date-time (2024-05-01T09:30:00Z)"
        ) from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _check_bound(value: str) -> str:
    date_bound(value)
    return value


DateBound = Annotated[
    str,
    Field(max_length=40),
    AfterValidator(_check_bound),
]


MemoryId = Annotated[str, Field(min_length=1, max_length=100)]


def _json_number(value: object) -> object:
    """A number as JSON Schema's "integer"/"number" means it: never a string ("1") or a boolean
    (true), which pydantic's lax mode would turn into 1; 5.0 still counts as the integer 5."""
    if isinstance(value, str | bool):
        raise PydanticCustomError(
            "int_type",
            "Input should be a number, not the {kind} {shown}",
            {"kind": "boolean" if isinstance(value, bool) else "string", "shown": json.dumps(value)[:40]},
        )
    return value


# Goes after the Field constraints (``Annotated[int, Field(ge=1), JsonNumber]``): placed before
# them, pydantic publishes ``ge``/``le`` in the JSON schema instead of ``minimum``/``maximum``.
JsonNumber = BeforeValidator(_json_number)


# Field types shared by store_memory, update_memory and the typer commands: one rule each.
Level = Annotated[int, Field(ge=0, le=2, description="0 concept, 1 context, 2 episode."), JsonNumber]
Kind = Literal["episodic", "semantic"]
Importance = Annotated[float, Field(ge=0.0, le=1.0), JsonNumber]
Tags = Annotated[list[Annotated[str, Field(max_length=MAX_TAG_CHARS)]], Field(max_length=MAX_TAGS)]
SourceInfo = Annotated[str, Field(max_length=500)]


def _core_rule(check: Callable[[str], str], rule: str) -> AfterValidator:
    """A rule of ``core.validation`` as pydantic reports a field's error (``rule`` says it)."""

    def validate(value: str) -> str:
        try:
            return check(value)
        except InvalidInputError:
            raise ValueError(rule) from None

    return AfterValidator(validate)


_NAME_RULE = f"1-{MAX_KEY_CHARS} letters, digits or . _ : / - (no spaces)"
MemoryKey = Annotated[
    str,
    Field(min_length=1, max_length=MAX_KEY_CHARS),
    _core_rule(check_key, f"a key is {_NAME_RULE}"),
]
# update_memory's key: a new key, or '' to remove the memory's key.
KeyChange = Annotated[
    str,
    Field(max_length=MAX_KEY_CHARS, description="'' removes it."),
    _core_rule(lambda value: value and check_key(value), f"a key is {_NAME_RULE}, or '' to remove it"),
]
SessionName = Annotated[
    str,
    Field(min_length=1, max_length=MAX_KEY_CHARS),
    _core_rule(check_session, f"a session is {_NAME_RULE}, not '{CURRENT_SESSION}'"),
]


def _session_filter(value: str) -> str:
    return CURRENT_SESSION if value.strip() == CURRENT_SESSION else check_session(value)


SessionFilter = Annotated[
    str,
    Field(min_length=1, max_length=MAX_KEY_CHARS, description=f"'{CURRENT_SESSION}': the caller's."),
    _core_rule(_session_filter, f"a session is {_NAME_RULE}, or '{CURRENT_SESSION}'"),
]


def optional(description: str | None = None) -> Any:
    """A field that is None unless set, and left out of the answer then."""
    return Field(default=None, description=description, exclude_if=lambda value: value is None)


def flag(description: str) -> Any:
    """A field that is False unless set, and left out of the answer then."""
    return Field(default=False, description=description, exclude_if=lambda value: not value)


def _fields_rule(check: Callable[[dict[str, Any]], object], field: str) -> AfterValidator:
    """A rule of ``core/metadata.py`` as pydantic reports it: its code (``invalid_metadata``,
    ``metadata_too_large``) and message, the field's place given by pydantic."""

    def validate(value: dict[str, Any]) -> dict[str, Any]:
        try:
            check(value)
        except InvalidInputError as exc:
            raise PydanticCustomError(exc.code, exc.message.removeprefix(f"`{field}` ")) from None
        return value

    return AfterValidator(validate)


# The caller's own fields of a memory (core/metadata.py: <= 32 keys, depth 4, 4 KiB; no reserved key).
Metadata = Annotated[dict[str, Any], _fields_rule(check_fields, "metadata")]
# filters.metadata: field name -> a string, number or boolean the field must equal.
MetadataFilter = Annotated[
    dict[str, Any], _fields_rule(lambda value: check_fields_filter(value, field="metadata"), "metadata")
]
