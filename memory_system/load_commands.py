"""`load`, `remove-file` and `watch`: markdown notes into memories, from a shell.

Progress bars and messages go to stderr, so ``--json`` output on stdout stays machine-readable.
Exit codes: 0 everything loaded, 1 nothing could be done (one line says why), 3 loaded, but some
files were skipped (each is listed with its reason).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from memory_system.options import FacadeSource, JsonOption, ProjectOption, emit
from memory_system.options import rate as _rate
from memory_system.progress import progress_bar

if TYPE_CHECKING:
    from cognitive_memory.service import LoadResult, WatchResult

__all__ = ["EXIT_SKIPPED", "format_load", "register"]

EXIT_SKIPPED = 3


def format_load(result: LoadResult) -> str:
    """The summary printed after a load."""
    chunks = result.chunks
    model = f" (loading the model: {result.model_load_seconds:.2f} s)" if result.model_load_seconds else ""
    lines = [
        f"Loaded {result.root}: {result.files} files ({result.files_loaded} new or changed, "
        f"{result.files_unchanged} unchanged, {result.files_removed} removed, {len(result.skipped)} skipped)",
        f"Chunks: {chunks.added} added, {chunks.updated} updated, {chunks.removed} removed, "
        f"{chunks.unchanged} unchanged",
        f"Took {result.seconds:.2f} s{model}" + _rate(result.chunks, result.memories_per_second),
    ]
    if result.skipped:
        lines.append("Skipped:")
        lines += [f"  {item.path}: {item.reason}" for item in result.skipped]
    return "\n".join(lines)


def _format_batch(batch: WatchResult) -> str:
    chunks = batch.chunks
    lines = [
        f"{len(batch.changed)} changed, {len(batch.removed)} removed: {chunks.added} chunks added, "
        f"{chunks.updated} updated, {chunks.removed} removed"
    ]
    lines += [f"  skipped {item.path}: {item.reason}" for item in batch.skipped]
    return "\n".join(lines)


def register(app: typer.Typer, facade: FacadeSource) -> None:
    """Add ``load``, ``remove-file`` and ``watch`` to ``app``; ``facade`` opens a MemoryService."""

    @app.command(name="load")
    def load_command(
        path: Annotated[str, typer.Argument(help="A markdown file, or a directory to load recursively.")],
        project: ProjectOption = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
        quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
    ) -> None:
        """Load markdown notes: one memory per section; a re-load only touches what changed."""
        enabled = not quiet and not as_json
        with facade() as service, progress_bar("Loading", "KB of markdown", enabled=enabled) as advance:
            result = service.load_markdown(path, on_progress=advance, project=project)
        emit(result, format_load(result), as_json)
        if result.skipped:
            raise typer.Exit(code=EXIT_SKIPPED)

    @app.command(name="remove-file")
    def remove_file_command(
        path: Annotated[str, typer.Argument(help="A loaded file, or a directory of loaded files.")],
        as_json: JsonOption = False,
    ) -> None:
        """Forget the memories loaded from a file (or from every file under a directory)."""
        from cognitive_memory.loaders.files import readable

        with facade() as service:
            result = service.remove_file(path)
        shown = readable(path)
        text = f"Removed {result.memories_removed} memories of {result.files_removed} files under {shown}"
        emit(result, text, as_json)

    @app.command(name="watch")
    def watch_command(
        path: Annotated[str, typer.Argument(help="A markdown file or directory to follow.")],
        project: ProjectOption = None,
    ) -> None:
        """Load markdown, then follow its changes (create, modify, delete, rename) until Ctrl-C."""
        import signal
        import threading

        def loaded(result: LoadResult) -> None:
            typer.echo(format_load(result) + "\nWatching for changes...", err=True)

        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda _signum, _frame: stop.set())
        with facade() as service:
            service.watch_markdown(
                path,
                on_load=loaded,
                on_batch=lambda batch: typer.echo(_format_batch(batch), err=True),
                stop=stop,
                project=project,
            )
        typer.echo("Stopped watching.", err=True)
