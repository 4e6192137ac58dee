"""Transfer: memories written out as JSON Lines and read back in (`memory_system export` and
`import`), with their versions and links; the import's summary for people.

The format and the import rules live in ``cognitive_memory.transfer.exchange``; the file handling (stdout,
stdin, a partial file never left under the final name) stays with the command.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import BinaryIO

from cognitive_memory.system import CognitiveSystem
from cognitive_memory.transfer.exchange import ImportReport, export_lines, import_lines, read_import

__all__ = ["ImportReport", "export", "format_import", "import_stream"]

Progress = Callable[[int, int], None]
# Skipped items listed in the text summary (--json lists them all).
SHOWN_SKIPS = 20


def export(
    system: CognitiveSystem, project: str | None, with_vectors: bool, progress: Progress | None
) -> Iterator[str]:
    """The export line by line: a header, then each memory (of ``project`` only, if given) with
    every field, its versions and its links."""
    return export_lines(system, project, with_vectors, progress)


def import_stream(
    system: CognitiveSystem,
    stream: BinaryIO,
    project: str | None,
    *,
    default_project: str,
    file_format: str,
    dry_run: bool,
    session_id: str,
    progress: Progress | None,
) -> ImportReport:
    """Read and check an export or an official MCP memory.jsonl, then import it (idempotent by
    id); ``project`` moves every memory there, ``default_project`` takes the official format's."""
    source = read_import(stream, project, default_project, file_format)
    return import_lines(system, source, dry_run=dry_run, session_id=session_id, progress=progress)


def format_import(file: str, report: ImportReport) -> str:
    """The summary of an import (or of a dry run: what it would do)."""
    if report.dry_run:
        head = (
            f"Dry run of {file} ({report.format}), nothing was written: would add {report.added}, "
            f"update {report.updated}, leave {report.unchanged} unchanged, embed {report.embedded}; "
            f"links: would add {report.links_added}, {report.links_unchanged} already there"
        )
    else:
        head = (
            f"Imported {file} ({report.format}): {report.added} added, {report.updated} updated, "
            f"{report.unchanged} unchanged, {report.embedded} embedded; links: {report.links_added} added, "
            f"{report.links_unchanged} already there"
        )
    lines = [f"{head}; {len(report.skipped)} skipped" + (":" if report.skipped else ".")]
    lines += [
        f"  {f'line {skip.line}, {skip.id}: ' if skip.line else ''}{skip.reason}"
        for skip in report.skipped[:SHOWN_SKIPS]
    ]
    if len(report.skipped) > SHOWN_SKIPS:
        lines.append(f"  ... and {len(report.skipped) - SHOWN_SKIPS} more (--json lists them all).")
    if report.unkeyed:
        lines.append(f"{len(report.unkeyed)} without their key:")
        lines += [f"  line {skip.line}, {skip.id}: {skip.reason}" for skip in report.unkeyed[:SHOWN_SKIPS]]
    return "\n".join(lines)
