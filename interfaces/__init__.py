"""Interfaces over the core: the CognitiveCLI facade and the MCP server."""

from interfaces.cli import CognitiveCLI

__all__ = ["CognitiveCLI"]
