"""The tools' arguments are closed: an unknown name is refused, never silently ignored.

The SDK builds each tool's arguments model from the tool function's signature and lets unknown
keys through. ``closed`` gives a tool a model that forbids them, so its published input schema
says ``additionalProperties: false`` like the nested models (``context``, ``filters``) already
do; ``names_at`` lists the names a refusal offers instead of the unknown one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast, get_args

from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from pydantic import BaseModel, ConfigDict

from interfaces.tool_schemas import input_schema, output_schema

__all__ = ["closed", "names_at"]


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
