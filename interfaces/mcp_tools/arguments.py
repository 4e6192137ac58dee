"""The tools' arguments are closed: an unknown name is refused, never silently ignored.

The SDK builds each tool's arguments model from the tool function's signature and lets unknown
keys through. ``closed`` gives a tool a model that forbids them, so its published input schema
says ``additionalProperties: false`` like the nested models (``context``, ``filters``) already
do; ``names_at`` lists the names a refusal offers instead of the unknown one, and ``instead_of``
the one it stands for when another memory server's name, or a field given one level off, says so."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast, get_args

from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from pydantic import BaseModel, ConfigDict

from interfaces.tool_schemas import input_schema, output_schema

__all__ = ["closed", "instead_of", "names_at"]

# What other memory servers (the official one, Memento, bootstrap and category stores) call the
# fields these tools take: a refusal of one of these names says which name to use here.
_OTHER_NAMES: dict[str, tuple[str, ...]] = {
    "strength": ("weight",),
    "confidence": ("weight",),
    "category": ("tags",),
    "categories": ("tags",),
    "relationType": ("relation",),
    "relation_type": ("relation",),
    "from": ("from_id",),
    "to": ("to_id",),
    "source": ("from_id",),
    "target": ("to_id",),
    "content": ("text",),
    "observations": ("text",),
    "entityName": ("key", "keys"),
    "entity_name": ("key", "keys"),
    "names": ("keys",),
    "id": ("memory_id", "memory_ids"),
    "ids": ("memory_ids",),
    "checkpoint": ("name",),
}


def closed(tool: Tool) -> Tool:
    """``tool`` with an arguments model that refuses unknown arguments, and the lean schemas it
    publishes (``interfaces/tool_schemas.py``): its closed input schema and its output schema."""
    model = tool.fn_metadata.arg_model
    namespace = {"__module__": model.__module__, "model_config": ConfigDict(extra="forbid")}
    # A subclass keeps the SDK's model (name, fields, validators) and only adds the config.
    closed_model = cast(type[ArgModelBase], type(model.__name__, (model,), namespace))
    published = tool.fn_metadata.output_schema
    # The SDK still validates every answer against the output model; the schema is what clients see.
    metadata = tool.fn_metadata.model_copy(
        update={
            "arg_model": closed_model,
            "output_schema": output_schema(published) if published else None,
        }
    )
    schema = input_schema(closed_model.model_json_schema(by_alias=True))
    return tool.model_copy(update={"fn_metadata": metadata, "parameters": schema})


def names_at(model: type[BaseModel], path: Sequence[int | str]) -> list[str] | None:
    """The names the model at ``path`` in ``model``'s arguments takes (``()``: the arguments
    themselves, ``("context",)``: the fields of ``context``); None if no model is there."""
    current: type[BaseModel] | None = model
    for step in path:
        if current is None:
            return None
        if isinstance(step, int):
            continue  # an item of a list: its model was found with the list
        field = next((f for n, f in current.model_fields.items() if step in (n, f.alias)), None)
        current = _model_in(field.annotation) if field else None
    return None if current is None else [f.alias or n for n, f in current.model_fields.items()]


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model an annotation holds, through Optional, lists and Annotated."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((found for arg in get_args(annotation) if (found := _model_in(arg))), None)


def instead_of(model: type[BaseModel], path: Sequence[int | str], name: str) -> str | None:
    """The place (``weight``, ``context.tags``) that the unknown ``name`` at ``path`` stands for:
    another server's name for a field taken there (``strength``: ``weight``), or a field of an
    object taken there (``key`` given beside ``context`` belongs in ``context.key``); None when
    neither."""
    names = names_at(model, path)
    if names is None:
        return None
    wanted = (name, *_OTHER_NAMES.get(name, ()))
    for candidate in _OTHER_NAMES.get(name, ()):
        if candidate in names:
            return candidate
    for field in names:
        inner = names_at(model, (*path, field)) or []
        found = next((candidate for candidate in wanted if candidate in inner), None)
        if found:
            return f"{field}.{found}"
    return None
