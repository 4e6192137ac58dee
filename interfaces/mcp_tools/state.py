"""What the lifespan hands every tool."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

from interfaces.cli import CognitiveCLI

__all__ = ["ServerState", "answer", "cli_of"]


@dataclass(frozen=True, slots=True)
class ServerState:
    cli: CognitiveCLI


def cli_of(ctx: Context[ServerState, Any]) -> CognitiveCLI:
    """The CognitiveCLI of the running server."""
    return ctx.request_context.lifespan_context.cli


def answer(result: BaseModel, text: str) -> CallToolResult:
    """A tool answer: the formatted text for people, the model as structured content."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=result.model_dump(mode="json"),
    )
