"""Loading markdown files and trees into the store, incrementally.

A file whose bytes are unchanged since its last load is not even parsed. A changed file is cut
into chunks and synced: unchanged chunks keep their memories, changed ones are updated in place,
and new and vanished ones are added and removed, in one transaction per batch of files. A file
gone from a re-loaded directory loses its memories; a file that still exists but cannot be read
keeps them. A file whose chunks cannot be stored (see ``_update``) is skipped with its reason.

Each public entry point holds the loader lock (``holding_load_lock``) from its first look at the
stored sources to its last write, so two loads of one tree never both add its chunks.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from cognitive_memory.core.memory import DEFAULT_PROJECT, SourceKind
from cognitive_memory.core.sources import SourceUpdate, SyncCounts
from cognitive_memory.core.validation import check_text
from cognitive_memory.errors import InvalidInputError
from cognitive_memory.loaders.files import (
    Skipped,
    TextFile,
    check_utf8_path,
    is_utf8_name,
    read_text,
    readable,
    walk_markdown,
)
from cognitive_memory.loaders.lock import holding_load_lock
from cognitive_memory.loaders.markdown import chunk_markdown
from cognitive_memory.loaders.store import SourceStore
from cognitive_memory.storage.sources import SourceRecord

__all__ = [
    "BATCH_CHUNKS",
    "LOADER_TYPE",
    "LoadReport",
    "existing_path",
    "forget_markdown",
    "load_markdown",
    "remove_markdown",
    "sync_files",
]

LOADER_TYPE = SourceKind.MARKDOWN.value
# Files are synced in batches of about this many chunks: one embedding call, one transaction.
BATCH_CHUNKS = 256
_NEVER_LOADED = (
    "name is not UTF-8 (bytes that are not are shown as \\xNN); load skips such names, so no memory "
    "was loaded from it and there is nothing to remove"
)

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class LoadReport:
    """What a load did: files by outcome, chunks by outcome, what was skipped, and how fast."""

    root: str
    files: int = 0
    files_loaded: int = 0
    files_unchanged: int = 0
    files_removed: int = 0
    chunks: SyncCounts = field(default_factory=SyncCounts)
    skipped: tuple[Skipped, ...] = ()
    seconds: float = 0.0
    model_seconds: float = 0.0

    @property
    def memories_per_second(self) -> float:
        """Memories written per second, not counting the one-time wait for the model to load."""
        written = self.chunks.added + self.chunks.updated
        working = self.seconds - self.model_seconds
        return written / working if working > 0 else 0.0


def load_markdown(
    store: SourceStore, path: Path, *, on_progress: Progress | None = None, project: str = DEFAULT_PROJECT
) -> LoadReport:
    """Load a markdown file or every markdown file under a directory into ``project`` (see the
    module docstring)."""
    started = time.perf_counter()
    root = existing_path(path)
    if root.is_dir():
        files, skipped = walk_markdown(root)
        prefix = str(root) + os.sep
    else:
        files, skipped, prefix = [root], [], None
    with holding_load_lock(store):
        known = {source.key: source for source in store.sources(LOADER_TYPE, prefix or str(root))}
        report = sync_files(store, files, known, on_progress=on_progress, project=project)
        removed = _vanished(known, files) if prefix is not None else []
        counts = report.chunks
        if removed:
            counts += SyncCounts(removed=store.forget_sources(removed))
    store.build_index()
    return replace(
        report,
        root=str(root),
        files_removed=len(removed),
        chunks=counts,
        skipped=(*skipped, *report.skipped),
        seconds=time.perf_counter() - started,
    )


def sync_files(
    store: SourceStore,
    files: Sequence[Path],
    known: Mapping[str, SourceRecord] | None = None,
    *,
    on_progress: Progress | None = None,
    project: str = DEFAULT_PROJECT,
) -> LoadReport:
    """Sync these markdown files (real paths) into ``project``: files with unchanged bytes in the
    same project are skipped, the rest is parsed and synced in batches. ``known`` holds the stored
    sources (looked up when not given). ``on_progress(done, total)`` counts kilobytes of markdown
    whose memories are stored (a changed file counts once its batch is embedded and committed).
    The caller holds the loader lock (``load_markdown`` and ``watch.apply_changes`` do)."""
    started = time.perf_counter()
    if known is None:
        known = {
            source.key: source
            for file in files
            if is_utf8_name(file)  # any other name is skipped by read_text below
            for source in store.sources(LOADER_TYPE, str(file))
            if source.key == str(file)
        }
    batch: list[SourceUpdate] = []
    skipped: list[Skipped] = []
    counts, loaded, unchanged, model_seconds = SyncCounts(), 0, 0, 0.0
    sizes = [_size(file) for file in files]
    total_kb, settled, pending = _kilobytes(sum(sizes)), 0, 0
    for done, (file, size) in enumerate(zip(files, sizes, strict=True), start=1):
        read = read_text(file)
        if isinstance(read, Skipped):
            skipped.append(read)
            settled += size
        elif (source := known.get(str(file))) is not None and _current(source, read.fingerprint, project):
            unchanged += 1
            counts += SyncCounts(unchanged=int(source.state.get("chunks", 0)))
            settled += size
        elif isinstance(update := _update(read, project), Skipped):
            skipped.append(update)
            settled += size
        else:
            batch.append(update)
            loaded += 1
            pending += size
        if sum(len(update.chunks) for update in batch) >= BATCH_CHUNKS or done == len(files):
            if batch and not store.encoder.is_ready:
                model_seconds = _load_model(store)
            counts += _sync(store, batch)
            batch, settled, pending = [], settled + pending, 0
        if on_progress is not None:
            on_progress(_kilobytes(settled), total_kb)
    seconds = time.perf_counter() - started
    return LoadReport("", len(files), loaded, unchanged, 0, counts, tuple(skipped), seconds, model_seconds)


def _size(file: Path) -> int:
    try:
        return file.stat().st_size
    except OSError:
        return 0


def _kilobytes(size: int) -> int:
    return -(-size // 1024)


def _load_model(store: SourceStore) -> float:
    """Load the embedding model now (the first embedding would wait for it anyway); its seconds."""
    started = time.perf_counter()
    store.encoder.warm_up()
    return time.perf_counter() - started


def remove_markdown(store: SourceStore, path: Path) -> tuple[int, int]:
    """Forget a loaded file, or every loaded file under a directory (the path need not exist).
    Returns (files, memories) removed. A path that is not UTF-8 is refused: no file under such a
    name is ever loaded."""
    target = check_utf8_path(path.expanduser().resolve(), _NEVER_LOADED)
    with holding_load_lock(store):
        return forget_markdown(store, target)


def forget_markdown(store: SourceStore, path: Path) -> tuple[int, int]:
    """``remove_markdown`` for a resolved path, by a caller that holds the loader lock."""
    target = str(path)
    keys = [
        source.key
        for source in store.sources(LOADER_TYPE, target)
        if source.key == target or source.key.startswith(target + os.sep)
    ]
    return len(keys), store.forget_sources(keys) if keys else 0


def existing_path(path: Path) -> Path:
    """The resolved path, or an error that says it does not exist or is not UTF-8."""
    resolved = path.expanduser().resolve()
    if not resolved.exists():
        raise InvalidInputError(f"{readable(path)} does not exist.", code="not_found")
    return check_utf8_path(resolved)


def _current(source: SourceRecord, fingerprint: str, project: str) -> bool:
    """The stored source holds these bytes in this project (a load into another project moves it)."""
    return source.fingerprint == fingerprint and source.state.get("project", DEFAULT_PROJECT) == project


def _update(file: TextFile, project: str) -> SourceUpdate | Skipped:
    """The file's chunks as an update, or why they cannot be stored: the chunker keeps every chunk
    under the memory text limit, and this check keeps one odd file from failing a whole batch."""
    chunks = tuple(chunk_markdown(file.text, file.path))
    for chunk in chunks:
        try:
            check_text(chunk.content)
        except InvalidInputError as exc:
            return Skipped(str(file.path), f"section {chunk.key[:80]!r} cannot be stored: {exc.message}")
    state = {"chunks": len(chunks), "project": project}
    return SourceUpdate(str(file.path), LOADER_TYPE, file.fingerprint, chunks, state, project)


def _sync(store: SourceStore, batch: Sequence[SourceUpdate]) -> SyncCounts:
    total = SyncCounts()
    for counts in store.sync_sources(batch) if batch else ():
        total += counts
    return total


def _vanished(known: Collection[str], files: Sequence[Path]) -> list[str]:
    """Stored sources under the root that were not found and no longer exist as files."""
    present = {str(file) for file in files}
    return [key for key in known if key not in present and not Path(key).is_file()]
