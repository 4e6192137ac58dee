"""Published output schemas without ``$ref`` or nullable ``anyOf``: same instances, cheaper checks.

Clients validate every structured result against the tool's output schema (the Python SDK with
``jsonschema``). Pydantic's schemas reference ``$defs`` and spell ``X | None`` as
``anyOf: [X, null]``; each ``$ref`` is a registry lookup and each ``anyOf`` a sub-validation, per
memory in a recall. Inlined and written as ``type: [X, "null"]`` the schema accepts exactly the
same documents and validates in about 60% of the time (bench: docs/performance.md).
"""

from __future__ import annotations

from typing import Any

__all__ = ["inline_schema"]

_MAX_DEPTH = 32
# Keywords that constrain only instances of their own type, so a null passes them untouched
# (unlike enum, const or the combinators, which would reject null once folded).
_TYPE_SCOPED = frozenset(
    {
        "type", "title", "description", "default", "format", "properties", "required",
        "additionalProperties", "items", "minItems", "maxItems", "minLength", "maxLength", "pattern",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    }
)  # fmt: skip


def inline_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with local ``$ref``s replaced by their definitions and ``anyOf [T, null]``
    folded into ``type``; returned unchanged if a reference is recursive or not local."""
    definitions = schema.get("$defs", {})
    try:
        inlined: dict[str, Any] = _inline(schema, definitions, 0)
    except _NotInlinable:
        return schema
    inlined.pop("$defs", None)
    return inlined


class _NotInlinable(Exception):
    """A recursive or non-local ``$ref``: keep the schema as pydantic wrote it."""


def _inline(node: Any, definitions: dict[str, Any], depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise _NotInlinable
    if isinstance(node, list):
        return [_inline(item, definitions, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _inline(_resolve(node, definitions), definitions, depth + 1)
    out = {key: _inline(value, definitions, depth + 1) for key, value in node.items() if key != "$defs"}
    return _fold_nullable(out)


def _resolve(node: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    reference = node["$ref"]
    name = reference.removeprefix("#/$defs/")
    if name == reference or name not in definitions:
        raise _NotInlinable
    siblings = {key: value for key, value in node.items() if key != "$ref"}
    return {**definitions[name], **siblings}


def _fold_nullable(node: dict[str, Any]) -> dict[str, Any]:
    """``anyOf: [{type: T, ...}, {type: null}]`` -> ``{type: [T, null], ...}`` when T is one type."""
    options = node.get("anyOf")
    if not isinstance(options, list) or len(options) != 2 or {"type": "null"} not in options:
        return node
    other = next(option for option in options if option != {"type": "null"})
    kind = other.get("type")
    clashes = set(other) & (set(node) - {"anyOf"})
    if not isinstance(kind, str) or kind == "null" or clashes or not set(other) <= _TYPE_SCOPED:
        return node
    folded = {key: value for key, value in node.items() if key != "anyOf"}
    return {**folded, **other, "type": [kind, "null"]}
