"""`memory_system git-load REPO`: a repository's history patterns as memories, with a progress bar.

Registered on the main app by ``register``; heavy imports happen inside the command body.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from memory_system.options import FacadeSource, JsonOption, ProjectOption, emit
from memory_system.options import rate as _rate
from memory_system.progress import progress_bar

if TYPE_CHECKING:
    from cognitive_memory.service import GitLoadResult

__all__ = ["format_git_load", "register"]


def register(app: typer.Typer, facade: FacadeSource) -> None:
    """Add ``git-load`` to ``app``; ``facade`` opens the MemoryService the other commands use (it
    turns core errors into one line on stderr and exit code 1)."""

    @app.command(name="git-load")
    def git_load(
        repo: Annotated[Path, typer.Argument(help="A git repository (or any directory inside one).")],
        project: ProjectOption = None,
        as_json: JsonOption = False,
    ) -> None:
        """Turn a repository's history into memories: files that change together, files that keep
        needing fixes, and how problems were fixed. Re-runs read only new commits."""
        from cognitive_memory.errors import CognitiveMemoryError
        from cognitive_memory.loaders.git_history import repository_root

        try:
            repository_root(repo)  # fail fast, before the memory system is opened
        except CognitiveMemoryError as exc:
            typer.echo(f"Error: {exc.message}", err=True)
            raise typer.Exit(code=1) from exc
        with (
            facade() as service,
            progress_bar(f"Reading {repo}", "commits", enabled=not as_json) as on_progress,
        ):
            result = service.load_git_history(repo, on_progress, project=project)
        emit(result, format_git_load(result), as_json)


def format_git_load(result: GitLoadResult) -> str:
    """The summary printed after a git load."""
    patterns = result.patterns
    found = (
        f"{patterns['cochange']} co-change, {patterns['hotspot']} hotspot, {patterns['solution']} solution"
    )
    head = (result.head or "")[:10]
    if result.head is None:
        return f"{result.name} ({result.repository}) has no commits yet: nothing to load."
    memories = result.memories
    if result.commits_read == 0 and not (memories.added or memories.updated or memories.removed):
        return (
            f"{result.name} is up to date at {head} ({result.commits_total} commits): {found} patterns, "
            f"{memories.unchanged} memories unchanged ({result.seconds:.2f} s)."
        )
    model = f" (loading the model: {result.model_load_seconds:.2f} s)" if result.model_load_seconds else ""
    walk = "the whole history" if result.full_walk else "new commits only"
    return "\n".join(
        [
            f"Loaded {result.name} ({result.repository}) at {head}",
            f"Commits: {result.commits_read} read ({walk}), {result.commits_total} in the history",
            f"Patterns: {found}",
            f"Memories: {memories.added} added, {memories.updated} updated, {memories.removed} removed, "
            f"{memories.unchanged} unchanged",
            f"Took {result.seconds:.2f} s{model}" + _rate(result.memories, result.memories_per_second),
        ]
    )
