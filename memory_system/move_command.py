"""`move-store`: copy the configured store of record into an empty one of the other kind
(SQLite to PostgreSQL for a team, and back), checked by counts (``service.moving``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from memory_system.opening import fail
from memory_system.options import JsonOption, emit

if TYPE_CHECKING:
    from cognitive_memory.settings import Settings

__all__ = ["register"]

SettingsSource = Callable[[], "Settings"]


def register(app: typer.Typer, settings: SettingsSource) -> None:
    """Add ``move-store`` to ``app``; ``settings`` resolves the configured settings."""

    @app.command(name="move-store")
    def move_store_command(
        target: Annotated[
            str,
            typer.Argument(
                help="Where to move the store: a postgresql:// URL of an empty database, or a SQLite "
                "file that does not exist yet.",
                show_default=False,
            ),
        ],
        as_json: JsonOption = False,
    ) -> None:
        """Copy every memory, version, link, key, trash entry and source of the configured store
        into an empty store (PostgreSQL or SQLite); the configured one is left as it was. Stop the
        servers first: what they store meanwhile stays behind."""
        from cognitive_memory.errors import CognitiveMemoryError
        from cognitive_memory.main import describe_store, is_server, open_records, open_store
        from cognitive_memory.service.moving import format_move, move_store

        configured = settings()
        source_name = describe_store(configured)
        target_name = describe_store(target)
        if target_name == source_name:
            raise fail(f"The store is already at {target_name}: name another store to move it to.")
        made: Path | None = None
        if is_server(target):
            use = f"set COGNITIVE_MEMORY_DATABASE_URL={target_name} (with its password)"
        else:
            made = Path(target).expanduser().absolute()
            if made.exists():
                raise fail(
                    f"{made} exists: move into a SQLite file that does not exist yet (the move makes it)."
                )
            use = f"unset COGNITIVE_MEMORY_DATABASE_URL and set COGNITIVE_MEMORY_DB_PATH={made}"
        try:
            source = open_records(configured)
        except CognitiveMemoryError as exc:
            raise fail(exc.message) from None
        try:
            try:
                into = open_store(target)
            except CognitiveMemoryError as exc:
                raise fail(exc.message) from None
            try:
                result = move_store(source, into, source_name, target_name, use)
            except CognitiveMemoryError as exc:
                raise fail(exc.message) from None
            finally:
                into.close()
        except typer.Exit:
            if made is not None and made.exists():  # a half-made file is not left for the next try
                for leftover in made.parent.glob(made.name + "*"):
                    leftover.unlink(missing_ok=True)
            raise
        finally:
            source.close()
        emit(result, format_move(result), as_json)
