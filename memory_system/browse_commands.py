"""`get` and `list`: read memories by id, or browse them a page at a time, from a shell.

Exit codes: 0 done, 1 bad input (one ``Error:`` line says why), 3 ``get`` did not find some ids.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from memory_system.options import (
    EXIT_MISSING,
    AfterOption,
    BeforeOption,
    FacadeSource,
    InProjectOption,
    JsonOption,
    LevelsOption,
    MetadataFilterOption,
    ProjectOption,
    SessionOption,
    SourcesOption,
    TagsOption,
    TypesOption,
    emit,
    recall_filters,
)

if TYPE_CHECKING:
    pass

__all__ = ["register"]


def register(app: typer.Typer, facade: FacadeSource) -> None:
    """Add ``get`` and ``list`` to ``app``; ``facade`` opens a MemoryService."""

    @app.command(name="get")
    def get_command(
        memory_ids: Annotated[
            list[str] | None, typer.Argument(help="The ids of the memories to read.")
        ] = None,
        key: Annotated[
            list[str] | None,
            typer.Option("--key", help="Read the memory stored under this key (repeatable)."),
        ] = None,
        history: Annotated[
            bool, typer.Option("--history", help="Also show earlier versions, oldest first.")
        ] = False,
        project: ProjectOption = None,
        as_json: JsonOption = False,
    ) -> None:
        """Show memories whole by id or key (exit 3 if some were not found)."""
        from cognitive_memory.service import format_get

        with facade() as service:
            result = service.get_memories(memory_ids or [], history, key or [], project=project)
        emit(result, format_get(result), as_json)
        if result.missing:
            raise typer.Exit(code=EXIT_MISSING)

    @app.command(name="list")
    def list_command(
        order_by: Annotated[
            str,
            typer.Option(
                "--order-by", help="created, last_accessed, importance or access_count (highest first)."
            ),
        ] = "created",
        limit: Annotated[int, typer.Option(min=1, max=100, help="Most memories on the page.")] = 20,
        cursor: Annotated[str | None, typer.Option(help="The next cursor a previous page printed.")] = None,
        text: Annotated[
            str | None, typer.Option(help="Only memories holding each of these words (typos tolerated).")
        ] = None,
        tag: TagsOption = None,
        level: LevelsOption = None,
        memory_type: TypesOption = None,
        source: SourcesOption = None,
        project: ProjectOption = None,
        in_project: InProjectOption = None,
        after: AfterOption = None,
        before: BeforeOption = None,
        session: SessionOption = None,
        metadata: MetadataFilterOption = None,
        overview: Annotated[
            bool,
            typer.Option(
                "--overview",
                help="Also show the tags in use and the sessions (counts, first and last times) of "
                "every matching memory.",
            ),
        ] = False,
        as_json: JsonOption = False,
    ) -> None:
        """List memories of the project (and global ones) without a query, a page at a time."""
        from cognitive_memory.service import format_list

        filters = recall_filters(
            tag, level, memory_type, source, in_project, after, before, session, metadata
        )
        with facade() as service:
            result = service.list_memories(
                filters, order_by, limit, cursor, project=project, text=text, overview=overview
            )
        emit(result, format_list(result), as_json)
