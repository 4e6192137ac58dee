"""Following a markdown tree as it changes: one process, one loaded model, the incremental path.

Changes are gathered by ``watchfiles`` (native file notifications) and debounced, so an editor's
burst of writes becomes one sync. A created or modified file is synced like a load; a deleted
file or directory loses its memories; a rename is a deletion plus a creation.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from cognitive_memory.core.memory import DEFAULT_PROJECT
from cognitive_memory.core.sources import SyncCounts
from cognitive_memory.loaders.files import PRUNED_DIRECTORIES, Skipped, is_markdown, walk_markdown
from cognitive_memory.loaders.notes import (
    LoadReport,
    existing_path,
    load_markdown,
    remove_markdown,
    sync_files,
)
from cognitive_memory.loaders.store import SourceStore

__all__ = ["DEBOUNCE_MS", "WatchBatch", "apply_changes", "watch_markdown"]

DEBOUNCE_MS = 500
# How long the watcher waits for a change before yielding an empty batch.
RUST_TIMEOUT_MS = 200


@dataclass(frozen=True, slots=True)
class WatchBatch:
    """What one debounced batch of file changes did."""

    changed: tuple[str, ...]
    removed: tuple[str, ...]
    chunks: SyncCounts
    skipped: tuple[Skipped, ...]


def watch_markdown(
    store: SourceStore,
    path: Path,
    *,
    on_load: Callable[[LoadReport], None] | None = None,
    on_batch: Callable[[WatchBatch], None] | None = None,
    stop: threading.Event | None = None,
    debounce_ms: int = DEBOUNCE_MS,
    project: str = DEFAULT_PROJECT,
) -> None:
    """Load ``path`` once, then follow its changes until ``stop`` is set (or the process is
    interrupted). ``on_load`` receives the first load's report, ``on_batch`` each later batch."""
    import watchfiles

    root = existing_path(path)
    loaded = False
    # The first load runs once the watcher is running (its first, possibly empty, batch), so a
    # change made while the tree loads is not missed: it arrives in a later batch.
    for changes in watchfiles.watch(
        root if root.is_dir() else root.parent,
        watch_filter=lambda _change, name: _relevant(root, Path(name)),
        debounce=debounce_ms,
        stop_event=stop,
        raise_interrupt=False,
        yield_on_timeout=True,
        rust_timeout=RUST_TIMEOUT_MS,
    ):
        if not loaded:
            report = load_markdown(store, root, project=project)
            loaded = True
            if on_load is not None:
                on_load(report)
            continue
        batch = apply_changes(store, root, (Path(name) for _, name in changes), project)
        if on_batch is not None and (batch.chunks.changed or batch.skipped):
            on_batch(batch)


def _relevant(root: Path, path: Path) -> bool:
    """Whether a change can matter: the watched file itself, or a path in the tree that a walk
    would enter (a directory's deletion counts, since its files go with it)."""
    if not root.is_dir():
        return path == root
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return False
    return not any(part.startswith(".") or part in PRUNED_DIRECTORIES for part in parts[:-1])


def apply_changes(
    store: SourceStore, root: Path, paths: Iterable[Path], project: str = DEFAULT_PROJECT
) -> WatchBatch:
    """Sync changed markdown files under ``root`` and forget those (or directories) that are gone."""
    changed: dict[Path, None] = {}
    removed: list[str] = []
    skipped: list[Skipped] = []
    counts = SyncCounts()
    for path in sorted(set(paths)):
        if path.is_file() and is_markdown(path):
            resolved = path.resolve()
            if resolved.is_relative_to(root) or resolved == root:
                changed[resolved] = None
            else:
                skipped.append(Skipped(str(path), f"symlink to {resolved}, outside the watched tree"))
        elif path.is_dir() and not path.is_symlink():
            # A directory moved into the tree is reported alone, without its files.
            found, _ = walk_markdown(path)
            changed.update((file, None) for file in found if file.is_relative_to(root))
        elif not path.exists():
            gone, memories = remove_markdown(store, path)
            if gone:
                removed.append(str(path))
                counts += SyncCounts(removed=memories)
    if changed:
        report = sync_files(store, list(changed), project=project)
        counts += report.chunks
        skipped += report.skipped
        store.build_index()
    return WatchBatch(tuple(map(str, changed)), tuple(removed), counts, tuple(skipped))
