"""memory_system: serve the MCP server and work with the memory from a shell.

Heavy imports (torch, the MCP SDK, Qdrant) happen inside command bodies so ``--help`` is instant.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer

from memory_system import doctor

if TYPE_CHECKING:
    from interfaces.cli import CognitiveCLI

__all__ = ["app", "main"]

app = typer.Typer(
    name="memory_system",
    help="Cognitive Memory: a persistent, searchable long-term memory for AI assistants (MCP).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
serve_app = typer.Typer(help="Run a server.", no_args_is_help=True)
app.add_typer(serve_app, name="serve")
doctor.register(app)


def _configure_logging() -> None:
    level = os.environ.get("COGNITIVE_MEMORY_LOG_LEVEL", "INFO").upper()
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level, logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def _fail(message: str) -> typer.Exit:
    typer.echo(f"Error: {message}", err=True)
    return typer.Exit(code=1)


@contextmanager
def _facade(profile: str = "default") -> Iterator[CognitiveCLI]:
    """A CognitiveCLI over a freshly built system; core errors become one line and exit 1."""
    from cognitive_memory.errors import CognitiveMemoryError
    from cognitive_memory.main import initialize_system
    from interfaces.cli import CognitiveCLI

    try:
        system = initialize_system(profile)
    except CognitiveMemoryError as exc:
        raise _fail(exc.message) from exc
    try:
        yield CognitiveCLI(system)
    except CognitiveMemoryError as exc:
        raise _fail(exc.message) from exc
    finally:
        system.close()


def _emit(result: Any, text: str, as_json: bool) -> None:
    typer.echo(json.dumps(result.model_dump(mode="json"), indent=2, ensure_ascii=False) if as_json else text)


@serve_app.command("mcp")
def serve_mcp() -> None:
    """Serve the MCP tools over stdio (point Claude Desktop, Claude Code or Cursor here)."""
    _configure_logging()
    from cognitive_memory.errors import CognitiveMemoryError
    from cognitive_memory.main import initialize_system
    from interfaces.mcp_server import create_server

    try:
        system = initialize_system()
    except CognitiveMemoryError as exc:
        raise _fail(exc.message) from exc
    server = create_server(system, max_results=int(system.configuration["max_memories_per_query"]))
    try:
        server.run()
    finally:
        system.close()


@app.command()
def status(
    detailed: Annotated[bool, typer.Option("--detailed", help="Include paths and internals.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the structured status as JSON.")] = False,
) -> None:
    """Show memory counts, storage health, recent activity and configuration."""
    from interfaces.formatting import format_status

    with _facade() as cli:
        result = cli.show_status(detailed)
        _emit(result, format_status(result), as_json)


@app.command()
def store(
    text: Annotated[str, typer.Argument(help="The content to remember.")],
    level: Annotated[int | None, typer.Option(min=0, max=2, help="0 concept, 1 context, 2 episode.")] = None,
    memory_type: Annotated[str | None, typer.Option("--type", help="episodic or semantic.")] = None,
    importance: Annotated[float, typer.Option(min=0.0, max=1.0, help="0.0 to 1.0.")] = 0.5,
    tag: Annotated[list[str] | None, typer.Option(help="A tag (repeatable).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Store one memory."""
    from interfaces.formatting import format_store

    context = {
        "hierarchy_level": level,
        "memory_type": memory_type,
        "importance_score": importance,
        "tags": tag,
    }
    with _facade() as cli:
        result = cli.store_experience(text, context)
        _emit(result, format_store(result), as_json)


@app.command()
def recall(
    query: Annotated[str, typer.Argument(help="What to recall.")],
    max_results: Annotated[int, typer.Option(min=1, help="Most core + peripheral memories.")] = 10,
    no_bridges: Annotated[bool, typer.Option("--no-bridges", help="Skip bridge discovery.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Recall memories for a query."""
    from interfaces.formatting import format_recall

    with _facade() as cli:
        result = cli.retrieve_memories(query, None, max_results, not no_bridges)
        _emit(result, format_recall(result), as_json)


def main() -> None:
    """Console-script entry point."""
    app()
