"""Patterns in a repository's history: files that change together, files that keep needing fixes,
and how problems were fixed. Pure functions over commits; docs/cli.md "Loading git history" explains
them to users.

Rules:

- **Current names.** A file's history counts under its name at HEAD: renames (``git log -M``) are
  followed from the newest commit back, so ``a -> b`` then ``b -> c`` makes ``a``'s and ``b``'s
  history ``c``'s. A new file that later takes a freed name has its own history.
- **Counted commits.** Merges carry no file list (their changes are their parents'). A commit
  touching more than ``MAX_COMMIT_FILES`` files (a mass rename, a vendored update, a reformat)
  says nothing about which files belong together, so it is not counted (its renames still are).
  Only files that still exist at HEAD get co-change and hotspot patterns.
- **Fixes.** A commit is a fix when its subject line has the word fix, fixes, fixed, fixing, bug,
  bugs, bugfix or hotfix (any case, whole words, so "prefix" and "debugger" are not fixes;
  ``fix:`` and ``fix(scope):`` conventional commits are).
- **Co-change** of files a and b: ``support`` is the number of counted commits touching both;
  ``confidence`` is support over the changes of the less often changed file (how reliably one
  change brings the other). A pair needs ``MIN_PAIR_SUPPORT`` commits and ``MIN_PAIR_CONFIDENCE``.
- **Recency.** Each commit weighs ``0.5 ** (age / HALF_LIFE_DAYS)``, its age measured from the
  newest commit (not from today, so a re-run on the same history gives the same numbers). A pair's
  ``recency`` is the mean weight of its commits; pairs are ranked by support x recency x
  confidence, and the best ``MAX_COCHANGES`` are kept.
- **Hotspot**: a file with at least ``MIN_HOTSPOT_FIXES`` fix commits that are at least
  ``MIN_HOTSPOT_RATIO`` of its changes, and more than the share of fixes among all counted commits
  (in a repository where every third commit is a fix, a file fixed every third change is
  ordinary); ranked by fixes x recency of those fixes, capped. Test
  files are not hotspots: a fix touches them to prove itself, not because the bug was there.
- **Solution**: every counted fix commit, the newest ``MAX_SOLUTIONS`` kept, with the shape of
  the change (files, lines added and deleted, test files touched).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

from cognitive_memory.loaders.git_history import Commit

__all__ = [
    "HALF_LIFE_DAYS",
    "MAX_COCHANGES",
    "MAX_COMMIT_FILES",
    "MAX_HOTSPOTS",
    "MAX_SOLUTIONS",
    "MIN_HOTSPOT_FIXES",
    "MIN_HOTSPOT_RATIO",
    "MIN_PAIR_CONFIDENCE",
    "MIN_PAIR_SUPPORT",
    "CochangePair",
    "Hotspot",
    "Patterns",
    "Solution",
    "Touch",
    "cochange_pairs",
    "find_patterns",
    "hotspots",
    "is_fix",
    "is_test_path",
    "solutions",
    "touches",
]

MAX_COMMIT_FILES = 30
MIN_PAIR_SUPPORT = 3
MIN_PAIR_CONFIDENCE = 0.5
MIN_HOTSPOT_FIXES = 2
MIN_HOTSPOT_RATIO = 0.2
HALF_LIFE_DAYS = 180.0
MAX_COCHANGES = 200
MAX_HOTSPOTS = 50
MAX_SOLUTIONS = 300

_FIX = re.compile(r"\b(fix|fixes|fixed|fixing|bugs?|bugfix(es)?|hotfix(es)?)\b", re.IGNORECASE)
_TEST = re.compile(r"(^|/)(tests?|specs?|__tests__)/|(^|/)test_[^/]*$|_tests?\.[^/]+$|\.(test|spec)\.[^/]+$")
_DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class Touch:
    """A counted commit with its files under their current names, and whether it is a fix."""

    commit: Commit
    files: tuple[str, ...]
    fix: bool


@dataclass(frozen=True, slots=True)
class CochangePair:
    file_a: str
    file_b: str
    support: int
    changes_a: int
    changes_b: int
    confidence: float
    recency: float
    last_time: int


@dataclass(frozen=True, slots=True)
class Hotspot:
    path: str
    changes: int
    fixes: int
    fix_ratio: float
    recency: float
    last_fix: Commit


@dataclass(frozen=True, slots=True)
class Solution:
    commit: Commit
    files: tuple[str, ...]
    lines_added: int
    lines_deleted: int
    test_files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Patterns:
    cochanges: tuple[CochangePair, ...]
    hotspots: tuple[Hotspot, ...]
    solutions: tuple[Solution, ...]


def is_fix(message: str) -> bool:
    """Whether a commit message's subject line says it fixes something (see the module rules)."""
    subject = message.strip().split("\n", 1)[0]
    return _FIX.search(subject) is not None


def is_test_path(path: str) -> bool:
    """Whether a path looks like a test file (a tests/ or spec/ directory, test_x, x_test, x.test.js)."""
    return _TEST.search(path) is not None


def touches(commits: Sequence[Commit]) -> list[Touch]:
    """The counted commits (see the module rules), oldest first, files under their current names.
    ``commits`` must be oldest first (parents before children)."""
    current: dict[str, str] = {}
    counted: list[Touch] = []
    for commit in reversed(commits):
        names = tuple(dict.fromkeys(current.get(f.path, f.path) for f in commit.files))
        for change in commit.files:
            if change.old_path is not None and change.old_path != change.path:
                current[change.old_path] = current.get(change.path, change.path)
        if names and not commit.is_merge and len(commit.files) <= MAX_COMMIT_FILES:
            counted.append(Touch(commit, names, is_fix(commit.message)))
    counted.reverse()
    return counted


def _weight(time: int, reference: int) -> float:
    return float(0.5 ** (max(reference - time, 0) / (HALF_LIFE_DAYS * _DAY)))


def cochange_pairs(history: Sequence[Touch], existing: Iterable[str] | None = None) -> list[CochangePair]:
    """Files that change together, best first (see the module rules)."""
    alive = None if existing is None else frozenset(existing)
    reference = max((touch.commit.time for touch in history), default=0)
    changes: Counter[str] = Counter()
    support: Counter[tuple[str, str]] = Counter()
    weight: defaultdict[tuple[str, str], float] = defaultdict(float)
    last: dict[tuple[str, str], int] = {}
    for touch in history:
        files = sorted(f for f in touch.files if alive is None or f in alive)
        changes.update(files)
        w = _weight(touch.commit.time, reference)
        for pair in combinations(files, 2):
            support[pair] += 1
            weight[pair] += w
            last[pair] = max(last.get(pair, 0), touch.commit.time)
    pairs = []
    for (a, b), n in support.items():
        confidence = n / min(changes[a], changes[b])
        if n >= MIN_PAIR_SUPPORT and confidence >= MIN_PAIR_CONFIDENCE:
            recency = weight[(a, b)] / n
            pairs.append(CochangePair(a, b, n, changes[a], changes[b], confidence, recency, last[(a, b)]))
    pairs.sort(key=lambda p: (-p.support * p.recency * p.confidence, p.file_a, p.file_b))
    return pairs[:MAX_COCHANGES]


def hotspots(history: Sequence[Touch], existing: Iterable[str] | None = None) -> list[Hotspot]:
    """Files whose changes are often fixes, worst first (see the module rules)."""
    alive = None if existing is None else frozenset(existing)
    reference = max((touch.commit.time for touch in history), default=0)
    changes: Counter[str] = Counter()
    fixes: defaultdict[str, list[Commit]] = defaultdict(list)
    for touch in history:
        for path in touch.files:
            if (alive is not None and path not in alive) or is_test_path(path):
                continue
            changes[path] += 1
            if touch.fix:
                fixes[path].append(touch.commit)
    base_rate = sum(touch.fix for touch in history) / len(history) if history else 0.0
    found = []
    for path, fixed in fixes.items():
        ratio = len(fixed) / changes[path]
        if len(fixed) >= MIN_HOTSPOT_FIXES and ratio >= MIN_HOTSPOT_RATIO and ratio > base_rate:
            recency = sum(_weight(c.time, reference) for c in fixed) / len(fixed)
            latest = max(fixed, key=lambda c: c.time)
            found.append(Hotspot(path, changes[path], len(fixed), ratio, recency, latest))
    found.sort(key=lambda h: (-h.fixes * h.recency, -h.fix_ratio, h.path))
    return found[:MAX_HOTSPOTS]


def solutions(history: Sequence[Touch]) -> list[Solution]:
    """The fix commits with the shape of their change, newest first, at most ``MAX_SOLUTIONS``."""
    fixes = [touch for touch in history if touch.fix]
    fixes.sort(key=lambda t: -t.commit.time)
    found = []
    for touch in fixes[:MAX_SOLUTIONS]:
        changes = touch.commit.files
        found.append(
            Solution(
                touch.commit,
                touch.files,
                sum(f.added or 0 for f in changes),
                sum(f.deleted or 0 for f in changes),
                tuple(path for path in touch.files if is_test_path(path)),
            )
        )
    return found


def find_patterns(commits: Sequence[Commit], existing: Iterable[str] | None = None) -> Patterns:
    """All three kinds of pattern in ``commits`` (oldest first); ``existing`` are the files at HEAD."""
    alive = None if existing is None else frozenset(existing)
    history = touches(commits)
    return Patterns(
        tuple(cochange_pairs(history, alive)),
        tuple(hotspots(history, alive)),
        tuple(solutions(history)),
    )
