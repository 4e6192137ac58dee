"""`export` and `import`: move memories between data directories, machines and tools as JSON Lines.

The format and the import rules live in ``cognitive_memory.transfer.exchange``; here are the file handling
(stdout and stdin, a partial file never left under the final name) and the summaries.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Annotated, Any, BinaryIO, Literal, TextIO

import typer

from memory_system.options import FacadeSource, JsonOption, project_name
from memory_system.progress import progress_bar

__all__ = ["register"]


def _fail(message: str) -> typer.Exit:
    typer.echo(f"Error: {message}", err=True)
    return typer.Exit(code=1)


def register(app: typer.Typer, facade: FacadeSource) -> None:
    """Add ``export`` and ``import`` to ``app``; ``facade`` opens a MemoryService."""

    @app.command(name="export")
    def export_command(
        project: Annotated[
            str | None, typer.Option(callback=project_name, help="Export only this project (default: all).")
        ] = None,
        with_vectors: Annotated[
            bool,
            typer.Option("--with-vectors", help="Include each embedding (an import then skips encoding)."),
        ] = False,
        output: Annotated[
            Path | None, typer.Option("--output", "-o", help="Write to this file (default: stdout).")
        ] = None,
        as_json: JsonOption = False,
    ) -> None:
        """Write memories as JSON Lines: a header, then one line per memory with every field, its
        versions and its links. The summary goes to stderr when the export goes to stdout."""
        with (
            facade() as service,
            progress_bar("Exporting", "memories", enabled=output is not None) as advance,
        ):
            lines = service.export_memories(project, with_vectors, advance)
            count = _write_stdout(lines) if output is None else _write_file(lines, output)
        summary = {"exported": count, "output": str(output) if output else None, "project": project}
        summary["with_vectors"] = with_vectors
        where = f" to {output}" if output else ""
        text = f"Exported {count} memories{where}" + (" with their vectors." if with_vectors else ".")
        typer.echo(json.dumps(summary) if as_json else text, err=output is None)

    @app.command(name="import")
    def import_command(
        file: Annotated[str, typer.Argument(help="The JSON Lines file ('-': read stdin).")],
        dry_run: Annotated[
            bool, typer.Option("--dry-run", help="Report what would change; write nothing.")
        ] = False,
        project: Annotated[
            str | None,
            typer.Option(
                callback=project_name,
                help="Put every imported memory in this project (default: the file's; for an "
                "official memory.jsonl, COGNITIVE_MEMORY_PROJECT, else 'default').",
            ),
        ] = None,
        file_format: Annotated[
            Literal["auto", "cognitive", "official-memory"],
            typer.Option("--format", help="auto (from the first line), cognitive or official-memory."),
        ] = "auto",
        as_json: JsonOption = False,
    ) -> None:
        """Import an export (idempotent by id: the same memory is skipped, a changed one updated
        with a version, a new one inserted as it was) or an official MCP memory.jsonl."""
        from cognitive_memory.service import format_import

        with _opened(file) as stream, facade() as service, progress_bar("Embedding", "memories") as advance:
            report = service.import_memories(stream, project, file_format, dry_run=dry_run, progress=advance)
        body: dict[str, Any] = {"file": file, **dataclasses.asdict(report)}
        typer.echo(json.dumps(body, indent=2, ensure_ascii=False) if as_json else format_import(file, report))


def _write_stdout(lines: Iterable[str]) -> int:
    return _write(lines, sys.stdout) - 1


def _write_file(lines: Iterable[str], output: Path) -> int:
    """Write to ``output.partial``, then rename: a killed export never leaves a file under the
    final name (and an import refuses a cut file: its header counts the lines)."""
    partial = output.with_name(output.name + ".partial")
    try:
        with partial.open("w", encoding="utf-8") as stream:
            count = _write(lines, stream) - 1
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(partial, output)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise _fail(f"Cannot write {output}: {exc.strerror or exc}") from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return count


def _write(lines: Iterable[str], stream: TextIO) -> int:
    written = 0
    for line in lines:
        stream.write(line + "\n")
        written += 1
    return written


def _opened(file: str) -> AbstractContextManager[BinaryIO]:
    """The import file ('-': stdin), read in bounded lines by the importer; anything but a regular
    file (a device, a FIFO) is refused before the store is opened."""
    from cognitive_memory.errors import InvalidInputError
    from cognitive_memory.transfer.exchange import open_import

    if file == "-":
        return nullcontext(sys.stdin.buffer)
    try:
        return open_import(Path(file))
    except InvalidInputError as exc:
        raise _fail(exc.message) from None
