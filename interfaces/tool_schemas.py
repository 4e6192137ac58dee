"""The schemas a tool publishes, lean: every client loads them, and many put them in the model's context.

Pydantic writes a ``title`` on every field (its name again), ``$defs`` with ``$ref``s, and
``X | None`` as ``anyOf: [X, null]``. Here:

- **Input schemas** (``input_schema``) are inlined, without titles: some clients do not resolve
  ``$ref`` in the arguments they show a model, and every definition is used once per tool. An
  optional argument is published as its own type (omitting it is how a caller says none; the
  server still takes an explicit null), an open object (``metadata``) as ``{"type": "object"}``
  (``additionalProperties: true`` is the default), and every bound, enum and default stays.
- **Output schemas** (``output_schema``) type the answer's own fields, and say which are always
  there, one level deep: a record inside (a memory, a score, a status section) is an open
  ``{"type": "object"}`` whose fields docs/tools.md lists. They only have to validate the
  structured content (clients check it against them); the server still validates every answer
  against its full pydantic model before sending it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["input_schema", "output_schema"]

_MAX_DEPTH = 32
# What pydantic writes that repeats a name, or (in an output schema) only explains a field.
_NAMING = frozenset({"title"})
_PROSE = frozenset({"title", "description", "default", "examples"})
_NULL = {"type": "null"}


class _NotInlinable(Exception):
    """A recursive or non-local ``$ref``: keep the schema as pydantic wrote it."""


def input_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` inlined and without titles; optional arguments published without their null
    alternative. Returned unchanged if a reference is recursive or not local."""
    definitions = schema.get("$defs", {})
    try:
        lean: dict[str, Any] = _lean_object(schema, definitions, 0)
    except _NotInlinable:
        return schema
    return lean


def output_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The answer's own fields with their types and which are required; nested records are open
    objects, nullable fields a ``type`` list, and no prose."""
    definitions = schema.get("$defs", {})
    fields = schema.get("properties", {})  # the SDK has inlined the root reference
    try:
        properties = {name: _shape(field, definitions) for name, field in fields.items()}
    except _NotInlinable:
        return schema
    lean: dict[str, Any] = {"type": "object", "properties": properties}
    if schema.get("required"):
        lean["required"] = list(schema["required"])
    return lean


def _lean_object(node: dict[str, Any], definitions: dict[str, Any], depth: int) -> dict[str, Any]:
    """An input schema node: titles dropped, references inlined, optional properties non-null."""
    if depth > _MAX_DEPTH:
        raise _NotInlinable
    node = _resolved(node, definitions)
    required = set(node.get("required", ()))
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _NAMING or key == "$defs" or (key == "additionalProperties" and value is True):
            continue  # additionalProperties: true is JSON Schema's default (an open object)
        if key == "properties":
            out[key] = {
                name: _lean_object(_optional(field, name in required), definitions, depth + 1)
                for name, field in value.items()
            }
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = _lean_object(value, definitions, depth + 1)
        elif key in ("anyOf", "oneOf", "allOf", "prefixItems"):
            out[key] = [_lean_object(option, definitions, depth + 1) for option in value]
        else:
            out[key] = value
    return _fold_nullable(out)


def _resolved(node: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    """``node`` with its local ``$ref`` replaced by the definition (``node``'s own keys win)."""
    if "$ref" not in node:
        return node
    reference = node["$ref"]
    name = reference.removeprefix("#/$defs/")
    if name == reference or name not in definitions:
        raise _NotInlinable
    siblings = {key: value for key, value in node.items() if key != "$ref"}
    return {**definitions[name], **siblings}


def _optional(field: dict[str, Any], required: bool) -> dict[str, Any]:
    """An argument that may be omitted, without ``default: null`` or the null alternative."""
    if required or field.get("default", ...) is not None:
        return field
    options = field.get("anyOf")
    options = options if isinstance(options, list) else []
    others = [option for option in options if option != _NULL]
    rest = {key: value for key, value in field.items() if key not in ("anyOf", "default")}
    if len(others) == 1 and _NULL in options and not set(rest) & set(others[0]) - {"description"}:
        return {**others[0], **rest}
    return {key: value for key, value in field.items() if key != "default"}


def _fold_nullable(node: dict[str, Any]) -> dict[str, Any]:
    """``anyOf: [{type: T, ...}, {type: null}]`` -> ``{type: [T, null], ...}`` when T is one
    type and its other keywords constrain only T's instances (so null still passes them)."""
    options = node.get("anyOf")
    if not isinstance(options, list) or len(options) != 2 or _NULL not in options:
        return node
    other = next(option for option in options if option != _NULL)
    kind = other.get("type")
    clashes = set(other) & (set(node) - {"anyOf"})
    if not isinstance(kind, str) or kind == "null" or clashes or not set(other) <= _TYPE_SCOPED:
        return node
    folded = {key: value for key, value in node.items() if key != "anyOf"}
    return {**folded, **other, "type": [kind, "null"]}


# Keywords that constrain only instances of their own type, so a null passes them untouched
# (unlike enum, const or the combinators, which would reject null once folded).
_TYPE_SCOPED = frozenset(
    {
        "type", "description", "format", "properties", "required", "additionalProperties", "items",
        "minItems", "maxItems", "minLength", "maxLength", "pattern", "minimum", "maximum",
        "exclusiveMinimum", "exclusiveMaximum",
    }
)  # fmt: skip


def _shape(field: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    """An answer field's type: a scalar's type (nullable as a list, enums kept), an object or a
    list of objects left open."""
    options = field.get("anyOf")
    if isinstance(options, list):
        shapes = [_shape(option, definitions) for option in options]
        if all(set(shape) == {"type"} and isinstance(shape["type"], str) for shape in shapes):
            types = [shape["type"] for shape in shapes]
            return {"type": sorted(set(types), key=types.index)}  # e.g. ["number", "null"]
        if _NULL in shapes and len(shapes) == 2:
            return _fold_nullable({"anyOf": shapes})
        return {"anyOf": shapes}
    if "$ref" in field:
        field = _resolved(field, definitions)
    if field.get("type") == "object" or "properties" in field:
        return {"type": "object"}
    if field.get("type") == "array":
        items = field.get("items")
        return {"type": "array", "items": _shape(items, definitions)} if items else {"type": "array"}
    return {key: value for key, value in field.items() if key not in _PROSE}
