"""`trash list|restore|empty` and `prune`: forgotten and pruned memories, and pruning, from a shell.

Exit codes: 0 done (or nothing to do, or declined at the prompt), 1 bad input or a refused token
(one ``Error:`` line says why), 3 ``trash restore`` left some out (not in the trash, or their id is
in use again).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from memory_system.options import EXIT_MISSING, FacadeSource, JsonOption, emit, request

if TYPE_CHECKING:
    from cognitive_memory.service import PruneResult

__all__ = ["register"]

DaysOption = Annotated[float | None, typer.Option(min=0, help="Days (fractions allowed).")]


def register(app: typer.Typer, facade: FacadeSource) -> None:
    """Add ``trash`` (list, restore, empty) and ``prune`` to ``app``."""
    trash_app = typer.Typer(help="Forgotten and pruned memories: list, restore, empty.", no_args_is_help=True)
    app.add_typer(trash_app, name="trash")

    @trash_app.command(name="list")
    def trash_list(
        limit: Annotated[int, typer.Option(min=1, help="List at most this many, latest first.")] = 1000,
        project: Annotated[
            str | None, typer.Option(help="Only this project's trash and global's (default: every project).")
        ] = None,
        as_json: JsonOption = False,
    ) -> None:
        """The memories in the trash: id, first 100 characters, when, why and by which session."""
        from cognitive_memory.service import format_trash

        with facade() as service:
            result = service.trash_list(limit, project=project)
        emit(result, format_trash(result), as_json)

    @trash_app.command(name="restore")
    def trash_restore(
        memory_ids: Annotated[
            list[str] | None, typer.Argument(help="The ids of the memories to bring back (newest entry).")
        ] = None,
        entries: Annotated[
            list[int] | None, typer.Option("--entry", help="An entry number of `trash list` (repeatable).")
        ] = None,
        as_json: JsonOption = False,
    ) -> None:
        """Bring memories back from the trash with their ids, tags, links and versions. A memory
        forgotten more than once comes back from its newest entry (or the --entry given); its other
        entries become its versions."""
        from cognitive_memory.service import format_restore

        if not memory_ids and not entries:
            typer.echo(
                "Error: give the ids of the memories to restore, or --entry N (see `trash list`).", err=True
            )
            raise typer.Exit(1)
        with facade() as service:
            result = service.trash_restore(memory_ids or [], entries or [])
        emit(result, format_restore(result), as_json)
        if result.missing or result.missing_entries or result.in_use:
            raise typer.Exit(EXIT_MISSING)

    @trash_app.command(name="empty")
    def trash_empty(
        older_than_days: Annotated[
            float | None, typer.Option(min=0, help="Only what went to the trash more than N days ago.")
        ] = None,
        yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
        as_json: JsonOption = False,
    ) -> None:
        """Delete trashed memories for good (they cannot be restored afterwards)."""
        from cognitive_memory.service import format_empty

        scope = f"trashed more than {older_than_days:g} days ago " if older_than_days is not None else ""
        if not yes and not typer.confirm(f"Delete the memories {scope}in the trash for good?"):
            typer.echo("Nothing deleted.")
            return
        with facade() as service:
            result = service.trash_empty(older_than_days)
        emit(result, format_empty(result), as_json)

    @app.command(name="prune")
    def prune_command(
        older_than_days: DaysOption = None,
        not_accessed_days: DaysOption = None,
        max_importance: Annotated[float | None, typer.Option(help="Importance at most this (0-1).")] = None,
        tags: Annotated[
            list[str] | None, typer.Option("--tag", help="Carrying this tag (repeatable).")
        ] = None,
        projects: Annotated[
            list[str] | None, typer.Option("--project", help="In this project (repeatable; default all).")
        ] = None,
        levels: Annotated[
            list[int] | None, typer.Option("--level", help="At this level (repeatable).")
        ] = None,
        keep_latest: Annotated[int, typer.Option(help="Spare the N newest matches.")] = 0,
        dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list what would go.")] = False,
        apply: Annotated[bool, typer.Option("--apply", help="Prune without asking.")] = False,
        confirm: Annotated[str | None, typer.Option(help="Prune with a dry run's token (scripts).")] = None,
        as_json: JsonOption = False,
    ) -> None:
        """Move memories matching every criterion given to the trash: lists them, then asks."""
        from cognitive_memory.service import PruneRequest, format_prune

        given = request(
            PruneRequest,
            older_than_days=older_than_days,
            not_accessed_days=not_accessed_days,
            max_importance=max_importance,
            tags=tags,
            projects=projects,
            hierarchy_levels=levels,
            keep_latest=keep_latest,
        )
        with facade() as service:
            if confirm is not None:
                result = service.prune_memories(given, dry_run=False, confirm=confirm)
            else:
                plan = service.prune_memories(given, dry_run=True)
                if dry_run or not plan.memories or not _agreed(plan, apply, as_json):
                    emit(plan, format_prune(plan), as_json)
                    return
                result = service.prune_memories(given, dry_run=False, confirm=plan.confirm)
        emit(result, format_prune(result), as_json)


def _agreed(plan: PruneResult, apply: bool, as_json: bool) -> bool:
    """``--apply``, or a yes at the prompt after the list (never a prompt with ``--json``)."""
    from cognitive_memory.service import format_prune

    if apply:
        return True
    if as_json:
        return False
    typer.echo(format_prune(plan))
    if typer.confirm(f"Move these {len(plan.memories)} memories to the trash?"):
        return True
    typer.echo("Nothing pruned.")
    raise typer.Exit(0)
