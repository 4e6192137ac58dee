"""`update`: change a memory in place from a shell (its earlier state is kept as a version)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from memory_system.options import FacadeSource, JsonOption, emit, json_object, request

if TYPE_CHECKING:
    pass

__all__ = ["register"]


def register(app: typer.Typer, facade: FacadeSource) -> None:
    @app.command()
    def update(
        memory_id: Annotated[str, typer.Argument(help="The id of the memory to change.")],
        text: Annotated[str | None, typer.Option(help="The new text (embedded and indexed again).")] = None,
        tag: Annotated[
            list[str] | None, typer.Option(help="A new tag (repeatable; replaces all tags).")
        ] = None,
        importance: Annotated[float | None, typer.Option(help="0.0 to 1.0.")] = None,
        level: Annotated[int | None, typer.Option(help="0 concept, 1 context, 2 episode.")] = None,
        memory_type: Annotated[str | None, typer.Option("--type", help="episodic or semantic.")] = None,
        source_info: Annotated[str | None, typer.Option(help="Where this knowledge came from.")] = None,
        key: Annotated[str | None, typer.Option(help="A new key ('' removes its key).")] = None,
        metadata: Annotated[
            str | None, typer.Option(help="Your own fields, a JSON object replacing them all ('{}' clears).")
        ] = None,
        as_json: JsonOption = False,
    ) -> None:
        """Change a memory's text, tags, importance, level, type, source, key or own fields in place."""
        from cognitive_memory.service import MemoryChanges, format_update

        changes = request(
            MemoryChanges,
            text=text,
            tags=tag,
            importance_score=importance,
            hierarchy_level=level,
            memory_type=memory_type,
            source_info=source_info,
            key=key,
            metadata=json_object(metadata),
        )
        with facade() as service:
            result = service.update_memory(memory_id, changes)
        emit(result, format_update(result), as_json)
