"""Loaded sources: markdown files and trees (`memory_system load`, `watch`, `remove-file`) and git
histories (`git-load`) as memories, kept in step with their source; answers of each load."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, Field

from cognitive_memory.core.memory import LOADED_KINDS
from cognitive_memory.core.sources import SyncCounts
from cognitive_memory.loaders import GitLoadReport, LoadReport, load_git, load_markdown, remove_markdown
from cognitive_memory.loaders.watch import watch_markdown
from cognitive_memory.system import CognitiveSystem

__all__ = [
    "ChunkCountsOut",
    "GitLoadResult",
    "LoadResult",
    "LoadedSourceOut",
    "RemoveResult",
    "SkippedOut",
    "WatchResult",
    "load_git_history",
    "load_notes",
    "loaded_sources",
    "remove_file",
    "watch_notes",
]

Progress = Callable[[int, int], None]


class SkippedOut(BaseModel):
    path: str
    reason: str


class ChunkCountsOut(BaseModel):
    added: int
    updated: int
    removed: int
    unchanged: int


class LoadResult(BaseModel):
    """What a markdown load did. ``files_loaded`` were new or changed; ``skipped`` could not be read."""

    success: bool = True
    root: str
    files: int
    files_loaded: int
    files_unchanged: int
    files_removed: int
    chunks: ChunkCountsOut
    skipped: list[SkippedOut]
    seconds: float
    model_load_seconds: float
    memories_per_second: float


class WatchResult(BaseModel):
    """One debounced batch of changes that ``watch`` applied."""

    changed: list[str]
    removed: list[str]
    chunks: ChunkCountsOut
    skipped: list[SkippedOut]


class RemoveResult(BaseModel):
    success: bool = True
    path: str
    files_removed: int
    memories_removed: int


class GitLoadResult(BaseModel):
    """What `git-load` did to one repository's history patterns."""

    success: bool = True
    repository: str = Field(description="Real path of the repository's working tree.")
    name: str
    head: str | None = Field(description="The commit loaded (None for a repository without commits).")
    commits_read: int = Field(description="Commits read by this run (0 when HEAD had not moved).")
    commits_total: int = Field(description="Commits of the history the patterns are drawn from.")
    full_walk: bool = Field(description="The whole history was read (first load or rewritten history).")
    patterns: dict[str, int] = Field(description="Patterns found, by type: cochange, hotspot, solution.")
    memories: ChunkCountsOut
    seconds: float
    model_load_seconds: float
    memories_per_second: float


class LoadedSourceOut(BaseModel):
    """A file or repository loaded into memory, and when it was last loaded."""

    key: str
    loader_type: str
    loaded_at: datetime


def _chunks_out(counts: SyncCounts) -> ChunkCountsOut:
    return ChunkCountsOut(
        added=counts.added, updated=counts.updated, removed=counts.removed, unchanged=counts.unchanged
    )


def _load_out(report: LoadReport) -> LoadResult:
    return LoadResult(
        root=report.root,
        files=report.files,
        files_loaded=report.files_loaded,
        files_unchanged=report.files_unchanged,
        files_removed=report.files_removed,
        chunks=_chunks_out(report.chunks),
        skipped=[SkippedOut(path=item.path, reason=item.reason) for item in report.skipped],
        seconds=round(report.seconds, 3),
        model_load_seconds=round(report.model_seconds, 3),
        memories_per_second=round(report.memories_per_second, 1),
    )


def load_notes(system: CognitiveSystem, path: str, on_progress: Progress | None, project: str) -> LoadResult:
    """Load a markdown file or tree incrementally into ``project``; ``on_progress(done, total)``
    counts kilobytes of markdown stored."""
    return _load_out(load_markdown(system.loaded, Path(path), on_progress=on_progress, project=project))


def watch_notes(
    system: CognitiveSystem,
    path: str,
    on_load: Callable[[LoadResult], None],
    on_batch: Callable[[WatchResult], None],
    stop: threading.Event | None,
    project: str,
) -> None:
    """Load ``path``, then follow its changes until ``stop`` is set or the process is interrupted."""
    watch_markdown(
        system.loaded,
        Path(path),
        on_load=lambda report: on_load(_load_out(report)),
        on_batch=lambda batch: on_batch(
            WatchResult(
                changed=list(batch.changed),
                removed=list(batch.removed),
                chunks=_chunks_out(batch.chunks),
                skipped=[SkippedOut(path=item.path, reason=item.reason) for item in batch.skipped],
            )
        ),
        stop=stop,
        project=project,
    )


def remove_file(system: CognitiveSystem, path: str) -> RemoveResult:
    """Forget the memories of a loaded markdown file (or of every loaded file under a directory)."""
    files, memories = remove_markdown(system.loaded, Path(path))
    return RemoveResult(path=path, files_removed=files, memories_removed=memories)


def load_git_history(
    system: CognitiveSystem, repo: str | Path, on_progress: Progress | None, project: str
) -> GitLoadResult:
    """Load or bring up to date the co-change, hotspot and solution patterns of a repository.
    ``on_progress(done, total)`` follows the commits read."""
    report = load_git(system.loaded, Path(repo), on_progress=on_progress, project=project)
    return _git_load_out(report)


def _git_load_out(report: GitLoadReport) -> GitLoadResult:
    return GitLoadResult(
        repository=report.repository,
        name=report.name,
        head=report.head,
        commits_read=report.commits_read,
        commits_total=report.commits_total,
        full_walk=report.full_walk,
        patterns={"cochange": report.cochanges, "hotspot": report.hotspots, "solution": report.solutions},
        memories=_chunks_out(report.memories),
        seconds=round(report.seconds, 3),
        model_load_seconds=round(report.model_seconds, 3),
        memories_per_second=round(report.memories_per_second, 1),
    )


def loaded_sources(system: CognitiveSystem) -> list[LoadedSourceOut]:
    """Every loaded markdown file and git repository, the latest loaded first."""
    found = [
        LoadedSourceOut(key=record.key, loader_type=record.loader_type, loaded_at=record.loaded_at)
        for kind in LOADED_KINDS
        for record in system.loaded.sources(kind.value)
    ]
    return sorted(found, key=lambda source: source.loaded_at, reverse=True)
