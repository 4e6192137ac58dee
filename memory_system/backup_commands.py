"""`backup` and `restore`: snapshots of the memory database, and putting one back (or forking it).

``backup`` and ``backup --list`` call the use case snapshot_memories calls
(``cognitive_memory.service.snapshots``: the same name rule, one snapshot at a time per folder, the
same answer); ``restore`` is the work of ``cognitive_memory.backup.restore``. Here arguments are
resolved against the settings, steps and progress go to stderr, the answer to stdout (text or
``--json``), and every expected failure is one ``Error:`` line with exit code 1.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from memory_system.options import JsonOption, emit

if TYPE_CHECKING:
    from cognitive_memory.backup.folder import BackupPlace
    from cognitive_memory.backup.restore import IndexOpener
    from cognitive_memory.settings import Settings, StorageSettings

__all__ = ["register"]

SettingsSource = Callable[[], "Settings"]
SAFETY_NAME = "before-restore"


def register(app: typer.Typer, settings: SettingsSource) -> None:
    """Add ``backup`` and ``restore`` to ``app``; ``settings`` resolves the configured settings."""

    @app.command(name="backup")
    def backup_command(
        dest: Annotated[
            Path | None,
            typer.Argument(
                help="The new snapshot directory (default: <data dir>/backups/<UTC time>[-NAME])."
            ),
        ] = None,
        name: Annotated[
            str | None,
            typer.Option("--name", help="Name the snapshot (kept by --keep), e.g. before-refactor."),
        ] = None,
        keep: Annotated[
            int | None,
            typer.Option(
                "--keep",
                min=1,
                help="Then delete the oldest unnamed snapshots of that folder beyond the newest N.",
            ),
        ] = None,
        list_them: Annotated[bool, typer.Option("--list", help="List the snapshots instead.")] = False,
        as_json: JsonOption = False,
    ) -> None:
        """Snapshot the memory database (safe while servers write) with a checked manifest."""
        from cognitive_memory.service.snapshots import create, format_snapshots, listed

        place = _place(settings().storage)
        with _errors():
            if list_them:
                result = listed((dest or place.folder).expanduser(), place)
            else:
                target = dest.expanduser() if dest is not None else None
                result = create(place, name, destination=target, keep=keep, step=_step)
        emit(result, format_snapshots(result), as_json, exclude_none=True)

    @app.command(name="restore")
    def restore_command(
        src: Annotated[
            str, typer.Argument(help="A snapshot directory, or the name of one in <data dir>/backups.")
        ],
        to: Annotated[
            Path | None,
            typer.Option("--to", help="Restore into this data directory instead (a fork; embedded index)."),
        ] = None,
        force: Annotated[
            bool, typer.Option("--force", help="Replace memories already there (backed up first).")
        ] = False,
        as_json: JsonOption = False,
    ) -> None:
        """Check a snapshot, put its database in place and rebuild the vector index from it."""
        storage = settings().storage
        with _errors():
            _restore(storage, src, to, force, as_json)


def _place(storage: StorageSettings) -> BackupPlace:
    """The configured database and data directory (so ``<data dir>/backups``)."""
    from cognitive_memory.backup.folder import BackupPlace

    url = storage.database_url
    return BackupPlace(
        storage.data_dir.expanduser(), storage.database_path, url.get_secret_value() if url else None
    )


def backups_dir(storage: StorageSettings) -> Path:
    """Where snapshots go by default: ``<data dir>/backups``."""
    return _place(storage).folder


@contextmanager
def _errors() -> Iterator[None]:
    """Core errors and OS errors leave as one ``Error:`` line, exit 1."""
    from cognitive_memory.errors import CognitiveMemoryError

    try:
        yield
    except CognitiveMemoryError as exc:
        typer.echo(f"Error: {exc.message}", err=True)
        raise typer.Exit(code=1) from None
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        typer.echo(f"Error: {exc.strerror or exc}{where}", err=True)
        raise typer.Exit(code=1) from None


def _step(text: str) -> None:
    typer.echo(f"backup: {text}", err=True)


def _restore(storage: StorageSettings, src: str, to: Path | None, force: bool, as_json: bool) -> None:
    from cognitive_memory.backup.folder import next_destination, one_at_a_time
    from cognitive_memory.backup.restore import claim_database, memory_count, restore_snapshot
    from cognitive_memory.backup.snapshot import create_snapshot, verify_snapshot
    from memory_system.progress import progress_bar

    snapshot = verify_snapshot(_find_snapshot(backups_dir(storage), src))
    if storage.database_url is not None and to is None:
        from cognitive_memory.errors import InvalidInputError

        raise InvalidInputError(
            f"restore puts a SQLite file in place; the store here is PostgreSQL. To put {snapshot.path} "
            "into an empty PostgreSQL database: COGNITIVE_MEMORY_DATABASE_URL= COGNITIVE_MEMORY_DB_PATH="
            f"{snapshot.database} memory_system move-store postgresql://... (see docs/team.md)."
        )
    typer.echo(
        f"restore: {snapshot.path} checked: checksum, integrity, migrations, schema and counts agree",
        err=True,
    )
    database, vector_path, open_index, target_backups = _target(storage, to)
    damaged = claim_database(database, vector_path, set_aside_damaged=force)
    if damaged is not None:
        typer.echo(f"restore: {database} could not be read; it was set aside as {damaged}", err=True)
    present = memory_count(database)
    safety = None
    if present and not force:
        raise _refusal(database, present)
    if present:
        with one_at_a_time(target_backups):
            destination = next_destination(target_backups, SAFETY_NAME)
            safety = create_snapshot(database, destination, name=SAFETY_NAME, step=_step)
        typer.echo(f"restore: the {present} memories there were backed up first to {safety.path}", err=True)
    with progress_bar("Rebuilding the vector index", "vectors", enabled=not as_json) as advance:
        report = restore_snapshot(snapshot, database, vector_path, open_index, advance)
    body = {
        "snapshot": str(snapshot.path),
        "safety_snapshot": str(safety.path) if safety else None,
        "damaged_set_aside": str(damaged) if damaged else None,
        **{
            key: getattr(report, key)
            for key in ("database", "memories", "vectors", "stale_removed", "seconds")
        },
    }
    if as_json:
        typer.echo(json.dumps(body, indent=2))
        return
    typer.echo(
        f"Restored {report.memories} memories from {snapshot.path} into {report.database}; "
        f"rebuilt the vector index from SQLite: {report.vectors} vectors in {report.seconds:.1f} s."
    )
    if safety is not None:
        typer.echo(f"What was there before: {safety.path} (`memory_system restore {safety.path} --force`).")
    if damaged is not None:
        typer.echo(f"The damaged database is kept as {damaged} (`sqlite3 FILE .recover` may salvage rows).")


def _refusal(database: Path, present: int) -> Exception:
    from cognitive_memory.errors import InvalidInputError

    return InvalidInputError(
        f"{database} already holds {present} memories: restore with --force (they are backed up "
        "first, as a before-restore snapshot), or --to another directory."
    )


def _find_snapshot(folder: Path, src: str) -> Path:
    """A path as given; a bare name: that directory in ``folder``, else the newest snapshot there
    whose manifest has that name."""
    from cognitive_memory.backup.snapshot import list_snapshots
    from cognitive_memory.errors import InvalidInputError

    given = Path(src).expanduser()
    if given.is_dir() or "/" in src or src.startswith("."):
        return given
    if (folder / src).is_dir():
        return folder / src
    named = [snapshot.path for snapshot in list_snapshots(folder) if snapshot.manifest.name == src]
    if named:
        return named[-1]
    raise InvalidInputError(f"No snapshot {src!r} in {folder}: `memory_system backup --list` shows them.")


def _target(storage: StorageSettings, to: Path | None) -> tuple[Path, Path | None, IndexOpener, Path]:
    """(database, embedded store directory or None, how to open the index, backups folder)."""
    from cognitive_memory.backup.folder import BACKUPS_DIR
    from cognitive_memory.backup.snapshot import DATABASE_NAME
    from cognitive_memory.upkeep import open_embedded_index, open_server_index

    if to is not None:
        directory = to.expanduser()
        vectors = directory / "vectors"
        return (
            directory / DATABASE_NAME,
            vectors,
            lambda: open_embedded_index(vectors),
            directory / BACKUPS_DIR,
        )
    if storage.qdrant_url:
        return storage.database_path, None, lambda: open_server_index(storage), backups_dir(storage)
    vectors = storage.vector_path
    return storage.database_path, vectors, lambda: open_embedded_index(vectors), backups_dir(storage)
