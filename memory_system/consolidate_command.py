"""`consolidate`: merge groups of near-duplicate memories into one survivor each, from a shell.

A dry run by default (it lists the groups and changes nothing); ``--apply`` merges them and moves
the others to the trash, where ``trash restore`` brings any of them back. Exit codes: 0 done (or
nothing to do), 1 bad input (one ``Error:`` line says why).
"""

from __future__ import annotations

from typing import Annotated

import typer

from memory_system.options import FacadeSource, JsonOption, emit, project_name
from memory_system.progress import progress_bar

__all__ = ["register"]


def register(app: typer.Typer, facade: FacadeSource) -> None:
    """Add ``consolidate`` to ``app``."""

    @app.command(name="consolidate")
    def consolidate_command(
        threshold: Annotated[
            float | None,
            typer.Option(
                min=0.5,
                max=1.0,
                help="Cosine at or above which memories are duplicates "
                "(default: COGNITIVE_MEMORY_NEAR_DUPLICATE, 0.92).",
            ),
        ] = None,
        project: Annotated[
            str | None,
            typer.Option(callback=project_name, help="Only this project (default: every project)."),
        ] = None,
        apply: Annotated[
            bool, typer.Option("--apply", help="Merge the groups (default: a dry run).")
        ] = False,
        as_json: JsonOption = False,
    ) -> None:
        """Find groups of near-duplicate memories in each project and (with --apply) keep one of each:
        tags, access counts and links merge into it, the others go to the trash."""
        from cognitive_memory.service import format_consolidate

        with facade() as service, progress_bar("Consolidating", "", enabled=not as_json) as advance:
            result = service.consolidate(threshold, project, apply=apply, advance=advance)
        emit(result, format_consolidate(result), as_json)
