"""Loading a repository's history patterns into the store, incrementally.

A repository is one source, keyed ``git:<real path of its working tree>``; its fingerprint is the
commit HEAD pointed at when it was last loaded. Each commit read is kept as a digest (migration
``0004_source_digests``), so a later load reads only the commits added since and recomputes the
patterns from all digests:

- HEAD unchanged: nothing is read or written (two quick ``git rev-parse`` calls).
- HEAD moved forward (the last loaded commit is an ancestor of HEAD, ``git merge-base
  --is-ancestor``): only ``last..HEAD`` is read, merged branches included.
- History rewritten (amend, rebase, reset to another line) or the digests incomplete: the whole
  history is read again and the digests replaced.

The patterns are synced with ``CognitiveSystem.sync_sources``: patterns whose text is unchanged
keep their memory and are not embedded again; vanished patterns are removed. The loader lock
(``holding_load_lock``) is held from the look at the stored source to the sync, so two git-loads
of one repository never both add its patterns.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cognitive_memory.core.memory import DEFAULT_PROJECT, SourceKind
from cognitive_memory.core.sources import SourceChunk, SourceUpdate, SyncCounts, content_hash
from cognitive_memory.loaders.files import check_utf8_path
from cognitive_memory.loaders.git_history import (
    Commit,
    commit_from_digest,
    commit_to_digest,
    count_commits,
    files_at,
    head_commit,
    is_ancestor,
    read_commits,
    repository_root,
)
from cognitive_memory.loaders.git_memories import pattern_chunks
from cognitive_memory.loaders.git_patterns import Patterns, find_patterns
from cognitive_memory.loaders.lock import holding_load_lock
from cognitive_memory.loaders.store import SourceStore
from cognitive_memory.storage.sources import SourceRecord

__all__ = ["GIT_LOADER_TYPE", "PATTERN_VERSION", "GitLoadReport", "load_git"]

GIT_LOADER_TYPE = SourceKind.GIT.value
# Bumped when the pattern rules change: the next load recomputes patterns from the stored digests.
PATTERN_VERSION = 1
_PROGRESS_EVERY = 100

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class GitLoadReport:
    """What a git load did: commits read now and known in total, patterns found, memories synced."""

    repository: str
    name: str
    head: str | None = None
    commits_read: int = 0
    commits_total: int = 0
    full_walk: bool = False
    cochanges: int = 0
    hotspots: int = 0
    solutions: int = 0
    memories: SyncCounts = field(default_factory=SyncCounts)
    seconds: float = 0.0
    model_seconds: float = 0.0

    @property
    def memories_per_second(self) -> float:
        """Memories written per second, not counting the one-time wait for the model to load."""
        written = self.memories.added + self.memories.updated
        working = self.seconds - self.model_seconds
        return written / working if working > 0 else 0.0


def load_git(
    store: SourceStore, repo: Path, *, on_progress: Progress | None = None, project: str = DEFAULT_PROJECT
) -> GitLoadReport:
    """Load (or bring up to date) the history patterns of the repository containing ``repo``.
    Raises InvalidInputError when it is not a git repository or git is missing."""
    started = time.perf_counter()
    root = check_utf8_path(repository_root(repo))
    head = head_commit(root)
    with holding_load_lock(store):
        report = _load(store, root, head, on_progress, project)
    if report.memories.changed:
        store.build_index()
    return dataclasses.replace(report, seconds=time.perf_counter() - started)


def _load(
    store: SourceStore, root: Path, head: str | None, on_progress: Progress | None, project: str
) -> GitLoadReport:
    """``load_git`` under the loader lock (its ``seconds`` are filled in by the caller)."""
    key = f"git:{root}"
    stored = next((s for s in store.sources(GIT_LOADER_TYPE, key) if s.key == key), None)
    if head is None or _current(stored, head, project):
        return _unchanged(root, head, stored)
    known = [commit_from_digest(d) for d in store.source_digests(key)] if stored else []
    since = _resume_point(root, stored, known, head)
    new = _read(root, head, since, on_progress)
    digests = [(commit.sha, commit_to_digest(commit)) for commit in new]
    store.save_source_digests(key, digests, replace=since is None)
    commits = [*known, *new] if since is not None else new
    patterns = find_patterns(commits, files_at(root, head))
    chunks = tuple(pattern_chunks(patterns, root.name, str(root)))
    model_seconds = _load_model(store, key, chunks)
    counts = _sync(
        store, SourceUpdate(key, GIT_LOADER_TYPE, head, chunks, project=project), patterns, len(commits)
    )
    return GitLoadReport(
        str(root),
        root.name,
        head,
        commits_read=len(new),
        commits_total=len(commits),
        full_walk=since is None,
        cochanges=len(patterns.cochanges),
        hotspots=len(patterns.hotspots),
        solutions=len(patterns.solutions),
        memories=counts,
        model_seconds=model_seconds,
    )


def _unchanged(root: Path, head: str | None, stored: SourceRecord | None) -> GitLoadReport:
    """The report of a load that found nothing new: what the stored source holds."""
    state = stored.state if stored is not None else {}
    return GitLoadReport(
        str(root),
        root.name,
        head,
        commits_total=int(state.get("commits", 0)),
        cochanges=int(state.get("cochanges", 0)),
        hotspots=int(state.get("hotspots", 0)),
        solutions=int(state.get("solutions", 0)),
        memories=SyncCounts(unchanged=int(state.get("memories", 0))),
    )


def _current(stored: SourceRecord | None, head: str, project: str) -> bool:
    """The stored patterns are of this commit, pattern version and project."""
    if stored is None:
        return False
    state = stored.state
    same_project = state.get("project", DEFAULT_PROJECT) == project
    return stored.fingerprint == head and state.get("version") == PATTERN_VERSION and same_project


def _resume_point(root: Path, stored: SourceRecord | None, known: list[Commit], head: str) -> str | None:
    """The last loaded commit when reading can resume from it, else None (read everything)."""
    if stored is None or not known or stored.state.get("commits") != len(known):
        return None
    last = str(stored.state.get("head", ""))
    return last if last and is_ancestor(root, last, head) else None


def _read(root: Path, head: str, since: str | None, on_progress: Progress | None) -> list[Commit]:
    """The commits of ``since..head`` (everything when ``since`` is None), oldest first."""
    total = count_commits(root, head, since) if on_progress is not None else 0
    commits: list[Commit] = []
    for commit in read_commits(root, head, since):
        commits.append(commit)
        if on_progress is not None and len(commits) % _PROGRESS_EVERY == 0:
            on_progress(len(commits), max(total, len(commits)))
    if on_progress is not None:
        on_progress(len(commits), max(total, len(commits)))
    commits.reverse()
    return commits


def _load_model(store: SourceStore, key: str, chunks: Sequence[SourceChunk]) -> float:
    """Load the embedding model now if some pattern text is new (the sync would wait for it
    anyway), so its one-time cost is reported apart; its seconds."""
    if store.encoder.is_ready:
        return 0.0
    stored = {row.content_hash for row in store.source_chunks(key)}
    if all(content_hash(chunk.content.strip()) in stored for chunk in chunks):
        return 0.0
    started = time.perf_counter()
    store.encoder.warm_up()
    return time.perf_counter() - started


def _sync(store: SourceStore, update: SourceUpdate, patterns: Patterns, commits: int) -> SyncCounts:
    """Sync the patterns (``update`` without its state, which is made here)."""
    state = {
        "version": PATTERN_VERSION,
        "head": update.fingerprint,
        "commits": commits,
        "memories": len(update.chunks),
        "cochanges": len(patterns.cochanges),
        "hotspots": len(patterns.hotspots),
        "solutions": len(patterns.solutions),
        "project": update.project,
    }
    (counts,) = store.sync_sources([dataclasses.replace(update, state=state)])
    return counts
