"""The caller's own fields of a memory: the top-level keys of its ``metadata`` that the system does
not write itself (``RESERVED_KEYS``), within bounds, and the exact-match filter on them.

A memory's ``metadata`` holds the system's keys (``source_info``, a session lesson's
``lesson_type`` ...) beside the caller's; a caller names neither a reserved key in its fields nor
in a filter, so it can never overwrite or pose as one. Memories loaded from markdown or git have
no caller's fields: their metadata is the loader's.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Mapping
from typing import Any

from cognitive_memory.errors import InvalidInputError

__all__ = [
    "MAX_FIELDS",
    "MAX_FIELDS_BYTES",
    "MAX_FIELD_DEPTH",
    "MAX_FIELD_NAME_CHARS",
    "RESERVED_KEYS",
    "caller_fields",
    "check_fields",
    "check_fields_filter",
    "with_fields",
]

MAX_FIELDS = 32
MAX_FIELD_NAME_CHARS = 64
# The object itself is depth 1: {"a": {"b": {"c": {"d": 1}}}} is depth 4.
MAX_FIELD_DEPTH = 4
MAX_FIELDS_BYTES = 4096
# The keys the system writes in a memory's metadata: by hand (source_info), for a session lesson,
# and the columns answers show in it (loader_type, speaker, source_path). Migration
# 0020_metadata_fields leaves them out of the table filters.metadata searches.
RESERVED_KEYS = frozenset(
    {
        "source_info", "loader_type", "speaker", "source_path",
        "lesson_type", "session_id", "importance_level", "session_context",
    }
)  # fmt: skip


def caller_fields(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The caller's fields of a memory's ``metadata``: every key but the reserved ones."""
    return {name: value for name, value in metadata.items() if name not in RESERVED_KEYS}


def with_fields(metadata: Mapping[str, Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    """``metadata`` with its caller's fields replaced by ``fields`` (the reserved keys stay)."""
    return {**{name: v for name, v in metadata.items() if name in RESERVED_KEYS}, **fields}


def check_fields(fields: Mapping[str, Any] | None, *, field: str = "metadata") -> dict[str, Any]:
    """The caller's fields if they keep the rules: a JSON object of at most MAX_FIELDS keys, each
    named by 1-64 characters (not a reserved key), nested at most MAX_FIELD_DEPTH deep, at most
    MAX_FIELDS_BYTES as compact JSON; else InvalidInputError naming ``field`` and the limit."""
    if fields is None:
        return {}
    if not isinstance(fields, Mapping):
        raise _invalid(f"`{field}` must be a JSON object of your own fields, not {_kind(fields)}.")
    if len(fields) > MAX_FIELDS:
        raise _invalid(f"`{field}` has {len(fields)} keys; at most {MAX_FIELDS} are taken.")
    for name in fields:
        _check_name(name, field)
    depth = _depth(fields)
    if depth > MAX_FIELD_DEPTH:
        raise _invalid(
            f"`{field}` is nested {depth} deep; at most {MAX_FIELD_DEPTH} (the object itself is 1): "
            "flatten the deepest values."
        )
    try:
        text = json.dumps(dict(fields), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise _invalid(f"`{field}` must hold plain JSON values (no NaN or Infinity): {exc}") from None
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_FIELDS_BYTES:
        raise InvalidInputError(
            f"`{field}` is {size:,} bytes as compact JSON; at most {MAX_FIELDS_BYTES:,}: keep long "
            "values in the memory's text.",
            code="metadata_too_large",
        )
    return dict(fields)


def check_fields_filter(
    pairs: Mapping[str, Any] | None, *, field: str = "filters.metadata"
) -> tuple[tuple[str, str, Any], ...]:
    """A filter on the caller's fields as (name, kind, value) triples, kind ``text``, ``number``
    or ``bool`` (a boolean as 0 or 1), as migration 0020's table holds them: each name is a field's
    (not a reserved key) and each value a string, a number or a boolean, matched exactly."""
    if not pairs:
        return ()
    if not isinstance(pairs, Mapping):
        raise _invalid(f"`{field}` must be an object of field names and values, not {_kind(pairs)}.")
    if len(pairs) > MAX_FIELDS:
        raise _invalid(f"`{field}` names {len(pairs)} fields; at most {MAX_FIELDS}.")
    triples = []
    for name, value in pairs.items():
        _check_name(name, field)
        triples.append((name, *_matched(value, f"{field}.{name}")))
    return tuple(triples)


def _matched(value: object, place: str) -> tuple[str, Any]:
    if isinstance(value, bool):
        return "bool", int(value)
    if isinstance(value, str):
        return "text", value
    if isinstance(value, int) and not -(2**63) <= value < 2**63:
        return "number", float(value)  # as SQLite's JSON holds an integer past 64 bits
    if isinstance(value, int | float) and math.isfinite(value):
        return "number", value
    raise _invalid(
        f"`{place}` is {_kind(value)}; a filter value is a string, number or boolean (exact match)."
    )


def _check_name(name: object, field: str) -> None:
    if not isinstance(name, str) or not 1 <= len(name) <= MAX_FIELD_NAME_CHARS:
        shown = str(name)[:40]
        raise _invalid(f"`{field}` key {shown!r}: a key is 1-{MAX_FIELD_NAME_CHARS} characters.")
    if any(unicodedata.category(char) == "Cc" for char in name):
        raise _invalid(f"`{field}` key {name!r} holds control characters.")
    if name in RESERVED_KEYS:
        hint = "use source_info itself" if name == "source_info" else "choose another name"
        raise _invalid(f"`{field}` key {name!r} is reserved (the system writes it): {hint}.")


def _depth(value: object) -> int:
    """How deep ``value`` nests objects and arrays (a scalar is 0), counted without recursion and
    stopping one level past the limit, so any input is measured in bounded time."""
    deepest, level = 0, [value]
    while level and deepest <= MAX_FIELD_DEPTH:
        children = [
            child
            for item in level
            for child in (
                item.values() if isinstance(item, Mapping) else item if isinstance(item, list) else ()
            )
        ]
        deepest += any(isinstance(item, Mapping | list) for item in level)
        level = [child for child in children if isinstance(child, Mapping | list)]
    return deepest


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "an array"
    return f"{type(value).__name__} {json.dumps(value, default=str)[:40]}"


def _invalid(message: str) -> InvalidInputError:
    return InvalidInputError(message, code="invalid_metadata")
