"""`link`, `unlink` and `related`: typed links between memories, from a shell.

Arguments become the same typed requests the MCP tools take (a rule they break is one ``Error:``
line, exit 1); core errors (unknown ids, a supersedes cycle) leave through the facade the same way.
"""

from __future__ import annotations

from typing import Annotated

import typer

from memory_system.options import FacadeSource, JsonOption, emit, request

__all__ = ["register"]

RELATION_HELP = (
    "relates_to, similar, depends_on, part_of, example_of, caused_by, contradicts, supersedes, "
    "or a name of your own (2-40 of a-z, 0-9, _)"
)


def register(app: typer.Typer, facade: FacadeSource) -> None:
    """Add ``link``, ``unlink`` and ``related`` to ``app``; ``facade`` opens a MemoryService."""

    @app.command(name="link")
    def link_command(
        from_id: Annotated[str, typer.Argument(help="The memory the link starts from.")],
        to_id: Annotated[str, typer.Argument(help="The memory the link points to.")],
        relation: Annotated[
            str, typer.Option("--relation", "-r", help=f"How FROM relates to TO: {RELATION_HELP}.")
        ],
        note: Annotated[str | None, typer.Option(help="Why they are linked.")] = None,
        weight: Annotated[
            float | None, typer.Option(help="Its weight in recall's activation, 0 to 1 (default 0.8).")
        ] = None,
        as_json: JsonOption = False,
    ) -> None:
        """Link two memories: FROM --relation--> TO (linking again changes only a --weight given)."""
        from cognitive_memory.service import LinkRequest, format_link

        given = request(
            LinkRequest, from_id=from_id, to_id=to_id, relation=relation, note=note, weight=weight
        )
        with facade() as service:
            result = service.link_memories(
                given.from_id, given.to_id, given.relation, given.note, given.weight
            )
        emit(result, format_link(result), as_json)

    @app.command(name="unlink")
    def unlink_command(
        from_id: Annotated[str, typer.Argument(help="The memory the links start from.")],
        to_id: Annotated[str, typer.Argument(help="The memory the links point to.")],
        relation: Annotated[
            str | None, typer.Option("--relation", "-r", help=f"Only this relation ({RELATION_HELP}).")
        ] = None,
        as_json: JsonOption = False,
    ) -> None:
        """Remove the links from FROM to TO (all of them, or those of --relation)."""
        from cognitive_memory.service import UnlinkRequest, format_unlink

        given = request(UnlinkRequest, from_id=from_id, to_id=to_id, relation=relation)
        with facade() as service:
            result = service.unlink_memories(given.from_id, given.to_id, given.relation)
        emit(result, format_unlink(result), as_json)

    @app.command(name="related")
    def related_command(
        memory_id: Annotated[str, typer.Argument(help="The memory to start from.")],
        depth: Annotated[int, typer.Option(help="Links to follow, 1 to 5.")] = 1,
        relation: Annotated[
            list[str] | None, typer.Option("--relation", "-r", help="Follow only this relation (repeatable).")
        ] = None,
        as_json: JsonOption = False,
    ) -> None:
        """The memories linked to MEMORY_ID (both directions), nearest first, with their paths."""
        from cognitive_memory.service import RelatedRequest, format_related

        given = request(RelatedRequest, memory_id=memory_id, depth=depth, relations=relation)
        with facade() as service:
            result = service.related_memories(given.memory_id, given.depth, given.relations)
        emit(result, format_related(result), as_json)
