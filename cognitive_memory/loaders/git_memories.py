"""Git patterns written as memories: readable text for recall, numbers in metadata.

Chunk keys are stable (``cochange:a|b``, ``hotspot:path``, ``solution:<sha>``), and texts and
metadata hold only what changes when the pattern itself changes: the recency weight, which moves
with every new commit of the repository, ranks patterns but is not stored. So a re-load after a
new commit updates only the patterns that commit touched, and re-embeds only changed texts.
Co-changes and hotspots are semantic L1 context; a solution is an episodic L2 episode dated by its
commit.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from cognitive_memory.core.memory import HierarchyLevel, MemoryType
from cognitive_memory.core.sources import SourceChunk
from cognitive_memory.loaders.git_patterns import CochangePair, Hotspot, Patterns, Solution

__all__ = ["MAX_BODY_CHARS", "MAX_LISTED_FILES", "pattern_chunks"]

# A commit body longer than this is cut (with a note) in its solution memory; the model reads
# only the first ~256 tokens anyway, and the full message stays in git.
MAX_BODY_CHARS = 4000
MAX_LISTED_FILES = 12


def _date(time: int) -> datetime:
    return datetime.fromtimestamp(time, UTC)


def _day(time: int) -> str:
    return _date(time).date().isoformat()


def _base(pattern_type: str, repository: str, repository_path: str) -> dict[str, Any]:
    return {
        "pattern_type": pattern_type,
        "repository": repository,
        "repository_path": repository_path,
    }


def cochange_chunk(pair: CochangePair, repository: str, repository_path: str) -> SourceChunk:
    """'Files a and b change together: 7 of the 9 commits that change a also change b ...'"""
    fewer, more = pair.file_a, pair.file_b
    if pair.changes_b < pair.changes_a:
        fewer, more = more, fewer
    content = (
        f"Files {pair.file_a} and {pair.file_b} in {repository} change together: {pair.support} of the "
        f"{min(pair.changes_a, pair.changes_b)} commits that change {fewer} also change {more} "
        f"({pair.changes_a} commits change {pair.file_a}, {pair.changes_b} change {pair.file_b}). "
        f"Last changed together on {_day(pair.last_time)}. When you edit one, check the other."
    )
    metadata = _base("cochange", repository, repository_path) | {
        "file_a": pair.file_a,
        "file_b": pair.file_b,
        "support": pair.support,
        "changes_a": pair.changes_a,
        "changes_b": pair.changes_b,
        "confidence": round(pair.confidence, 3),
        "last_changed": _day(pair.last_time),
    }
    return SourceChunk(
        key=f"cochange:{pair.file_a}|{pair.file_b}",
        content=content,
        hierarchy_level=HierarchyLevel.CONTEXT,
        memory_type=MemoryType.SEMANTIC,
        metadata=metadata,
        tags=("git", "cochange"),
        importance_score=round(0.3 + 0.4 * pair.confidence, 3),
        source_date=_date(pair.last_time),
    )


def hotspot_chunk(spot: Hotspot, repository: str, repository_path: str) -> SourceChunk:
    """'path keeps needing fixes: 4 of its 10 changes were fixes (40%). Latest fix ...'"""
    fix = spot.last_fix
    content = (
        f"{spot.path} in {repository} keeps needing fixes: {spot.fixes} of its {spot.changes} changes "
        f"were fixes ({spot.fix_ratio:.0%}). Latest fix on {_day(fix.time)} ({fix.sha[:10]}): "
        f"{fix.subject}"
    )
    metadata = _base("hotspot", repository, repository_path) | {
        "file_path": spot.path,
        "changes": spot.changes,
        "fixes": spot.fixes,
        "fix_ratio": round(spot.fix_ratio, 3),
        "last_fix_commit": fix.sha,
    }
    return SourceChunk(
        key=f"hotspot:{spot.path}",
        content=content,
        hierarchy_level=HierarchyLevel.CONTEXT,
        memory_type=MemoryType.SEMANTIC,
        metadata=metadata,
        tags=("git", "hotspot"),
        importance_score=round(0.4 + 0.4 * spot.fix_ratio, 3),
        source_date=_date(fix.time),
    )


def _listed(files: Sequence[str]) -> str:
    shown = ", ".join(files[:MAX_LISTED_FILES])
    more = len(files) - MAX_LISTED_FILES
    return f"{shown} and {more} more" if more > 0 else shown


def solution_chunk(solution: Solution, repository: str, repository_path: str) -> SourceChunk:
    """The fix's message, then the shape of the change: files, lines, tests."""
    commit = solution.commit
    body = commit.body
    if len(body) > MAX_BODY_CHARS:
        body = body[:MAX_BODY_CHARS].rstrip() + f"\n[message cut at {MAX_BODY_CHARS} characters]"
    files = len(solution.files)
    shape = (
        f"The fix changed {files} file{'s' if files != 1 else ''} (+{solution.lines_added} "
        f"-{solution.lines_deleted} lines): {_listed(solution.files)}. "
        + (f"Tests changed: {_listed(solution.test_files)}." if solution.test_files else "No test changed.")
    )
    header = f"Fix in {repository} on {_day(commit.time)} ({commit.sha[:10]}): {commit.subject}"
    metadata = _base("solution", repository, repository_path) | {
        "solution_type": "fix with tests" if solution.test_files else "fix",
        "commit": commit.sha,
        "subject": commit.subject,
        "files": list(solution.files[:50]),
        "files_changed": files,
        "lines_added": solution.lines_added,
        "lines_deleted": solution.lines_deleted,
        "test_files": list(solution.test_files[:50]),
    }
    return SourceChunk(
        key=f"solution:{commit.sha}",
        content="\n\n".join(part for part in (header, body, shape) if part),
        hierarchy_level=HierarchyLevel.EPISODE,
        memory_type=MemoryType.EPISODIC,
        metadata=metadata,
        tags=("git", "solution"),
        importance_score=0.5,
        source_date=_date(commit.time),
    )


def pattern_chunks(patterns: Patterns, repository: str, repository_path: str) -> list[SourceChunk]:
    """Every pattern as a chunk: co-changes, then hotspots, then solutions."""
    return [
        *(cochange_chunk(pair, repository, repository_path) for pair in patterns.cochanges),
        *(hotspot_chunk(spot, repository, repository_path) for spot in patterns.hotspots),
        *(solution_chunk(solution, repository, repository_path) for solution in patterns.solutions),
    ]
