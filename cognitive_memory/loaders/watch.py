"""Following a markdown tree as it changes: one process, one loaded model, the incremental path.

Changes are gathered by ``watchfiles`` (native file notifications) and debounced, so an editor's
burst of writes becomes one sync. A created or modified file is synced like a load; a deleted
file or directory loses its memories; a rename is a deletion plus a creation. Each batch holds
the loader lock (``holding_load_lock``), so a ``load`` run meanwhile waits for it, not the reverse.

``watchfiles`` cannot report a path that is not UTF-8: the batch that holds one fails as a whole.
Its other changes would be lost, so the watcher is started again and the tree loaded again through
the incremental path, which skips the odd name with its reason and catches up with the rest.
Native notifications cannot even start under a directory whose name is not UTF-8; such a tree is
polled instead (``watchfiles``' polling watcher, the same changes every 300 ms).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from cognitive_memory.core.memory import DEFAULT_PROJECT
from cognitive_memory.core.sources import SyncCounts
from cognitive_memory.errors import InvalidInputError
from cognitive_memory.loaders.files import (
    NOT_UTF8_NAME,
    PRUNED_DIRECTORIES,
    Skipped,
    is_markdown,
    is_utf8_name,
    readable,
    walk_markdown,
)
from cognitive_memory.loaders.lock import holding_load_lock
from cognitive_memory.loaders.notes import (
    LoadReport,
    existing_path,
    forget_markdown,
    load_markdown,
    sync_files,
)
from cognitive_memory.loaders.store import SourceStore

__all__ = ["DEBOUNCE_MS", "WatchBatch", "apply_changes", "watch_markdown"]

DEBOUNCE_MS = 500
# How long the watcher waits for a change before yielding an empty batch.
RUST_TIMEOUT_MS = 200
log = logging.getLogger(__name__)


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
    interrupted). ``on_load`` receives the first load's report (and that of a load again after a
    batch the watcher could not report), ``on_batch`` each later batch."""
    from watchfiles._rust_notify import WatchfilesRustInternalError

    watch = _Watch(store, existing_path(path), on_load, on_batch, stop, debounce_ms, project)
    while True:
        started = threading.Event()
        try:
            _follow(watch, started)
            return
        except WatchfilesRustInternalError as exc:
            if started.is_set():
                log.warning("%s; loading %s again to catch up with that moment's changes.", exc, watch.root)
            elif not watch.polling:
                # Native notifications cannot even start under a directory whose name is not UTF-8.
                log.warning("%s; polling %s for changes instead of native notifications.", exc, watch.root)
                watch.polling = True
            else:
                raise InvalidInputError(f"Cannot watch {watch.root}: {exc}.", code="watch_failed") from exc


@dataclass(slots=True)
class _Watch:
    store: SourceStore
    root: Path
    on_load: Callable[[LoadReport], None] | None
    on_batch: Callable[[WatchBatch], None] | None
    stop: threading.Event | None
    debounce_ms: int
    project: str
    polling: bool = False


def _follow(watch: _Watch, started: threading.Event) -> None:
    """Load the tree, then sync each batch of changes, until ``watch.stop`` is set. ``started`` is
    set once the watcher delivered its first batch."""
    import watchfiles

    root = watch.root
    # The load runs once the watcher is running (its first, possibly empty, batch), so a change
    # made while the tree loads is not missed: it arrives in a later batch.
    for changes in watchfiles.watch(
        root if root.is_dir() else root.parent,
        watch_filter=lambda _change, name: _relevant(root, Path(name)),
        debounce=watch.debounce_ms,
        stop_event=watch.stop,
        raise_interrupt=False,
        yield_on_timeout=True,
        rust_timeout=RUST_TIMEOUT_MS,
        force_polling=watch.polling,
    ):
        if not started.is_set():
            started.set()
            report = load_markdown(watch.store, root, project=watch.project)
            if watch.on_load is not None:
                watch.on_load(report)
            continue
        batch = apply_changes(watch.store, root, (Path(name) for _, name in changes), watch.project)
        if watch.on_batch is not None and (batch.chunks.changed or batch.skipped):
            watch.on_batch(batch)


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
    with holding_load_lock(store):
        return _apply(store, root, paths, project)


def _apply(store: SourceStore, root: Path, paths: Iterable[Path], project: str) -> WatchBatch:
    changed: dict[Path, None] = {}
    removed: list[str] = []
    skipped: list[Skipped] = []
    counts = SyncCounts()
    for path in sorted(set(paths)):
        if not is_utf8_name(path):
            if path.exists() and (path.is_dir() or is_markdown(path)):
                skipped.append(Skipped(readable(path), NOT_UTF8_NAME))
        elif path.is_file() and is_markdown(path):
            resolved = path.resolve()
            if resolved.is_relative_to(root) or resolved == root:
                changed[resolved] = None
            else:
                outside = f"symlink to {readable(resolved)}, outside the watched tree"
                skipped.append(Skipped(str(path), outside))
        elif path.is_dir() and not path.is_symlink():
            # A directory moved into the tree is reported alone, without its files.
            found, _ = walk_markdown(path)
            changed.update((file, None) for file in found if file.is_relative_to(root))
        elif not path.exists():
            gone, memories = forget_markdown(store, path.resolve())
            if gone:
                removed.append(str(path))
                counts += SyncCounts(removed=memories)
    if changed:
        report = sync_files(store, list(changed), project=project)
        counts += report.chunks
        skipped += report.skipped
        store.build_index()
    return WatchBatch(tuple(map(str, changed)), tuple(removed), counts, tuple(skipped))
