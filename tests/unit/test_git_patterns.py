"""Git history patterns on hand-made commit lists: renames, huge commits, merges, thresholds."""

from __future__ import annotations

import pytest

from cognitive_memory.loaders.git_history import Commit, FileChange
from cognitive_memory.loaders.git_patterns import (
    MAX_COMMIT_FILES,
    cochange_pairs,
    find_patterns,
    hotspots,
    is_fix,
    is_test_path,
    solutions,
    touches,
)

DAY = 86_400


def commit(n: int, message: str, *files: str | tuple[str, str], day: int | None = None) -> Commit:
    """Commit number ``n`` (its sha is n in hex, parent n-1); a tuple is a rename (old, new)."""
    changes = tuple(
        FileChange(f[1], 1, 0, old_path=f[0]) if isinstance(f, tuple) else FileChange(f, 3, 1) for f in files
    )
    parents = (f"{n - 1:040x}",) if n > 1 else ()
    return Commit(f"{n:040x}", parents, (day if day is not None else n) * DAY, message, changes)


def merge(n: int, other: int) -> Commit:
    return Commit(f"{n:040x}", (f"{n - 1:040x}", f"{other:040x}"), n * DAY, "Merge branch 'topic'")


@pytest.mark.parametrize(
    "message",
    [
        "Fix crash on empty input",
        "fix(parser): quote paths",
        "Bugfix for the cache",
        "hotfix",
        "Fixes #12",
        "bug",
    ],
)
def test_fix_subjects_are_recognised(message: str) -> None:
    assert is_fix(message)


@pytest.mark.parametrize(
    "message",
    [
        "Add a prefix option",
        "Debugger support",
        "Fixture cleanup",
        "Refactor\n\nThis fixes nothing in the subject",
    ],
)
def test_other_subjects_are_not_fixes(message: str) -> None:
    assert not is_fix(message)


def test_test_paths() -> None:
    assert [is_test_path(p) for p in ("tests/a.py", "src/test_a.py", "a_test.go", "ui/a.spec.ts")] == [
        True
    ] * 4
    assert not is_test_path("src/latest.py") and not is_test_path("contest/a.py")


def test_history_counts_under_the_current_name_through_a_rename_chain() -> None:
    history = touches(
        [
            commit(1, "add", "a.py"),
            commit(2, "edit", "a.py"),
            commit(3, "move", ("a.py", "b.py")),
            commit(4, "move again", ("b.py", "c.py")),
            commit(5, "new file in the freed name", "a.py"),
        ]
    )
    assert [t.files for t in history] == [("c.py",), ("c.py",), ("c.py",), ("c.py",), ("a.py",)]


def test_merges_and_huge_commits_are_not_counted_but_huge_renames_are_followed() -> None:
    vendored = [f"vendor/{i}.js" for i in range(MAX_COMMIT_FILES)]
    history = touches(
        [
            commit(1, "add", "a.py"),
            commit(2, "topic", "a.py", "b.py"),
            merge(3, 2),
            commit(4, "mass move", ("a.py", "src/a.py"), *vendored),
        ]
    )
    assert [t.commit.sha[-1] for t in history] == ["1", "2"]
    assert [t.files for t in history] == [("src/a.py",), ("src/a.py", "b.py")]


def test_cochange_support_confidence_and_thresholds() -> None:
    commits = [
        commit(1, "one", "a.py", "b.py", "c.py"),
        commit(2, "two", "a.py", "b.py"),
        commit(3, "three", "a.py", "b.py", "c.py"),
        commit(4, "four", "a.py"),
        commit(5, "five", "b.py", "d.py"),
        commit(6, "six", "c.py"),
        commit(7, "seven", "c.py"),
    ]
    pairs = cochange_pairs(touches(commits))
    assert [(p.file_a, p.file_b, p.support, p.changes_a, p.changes_b) for p in pairs] == [
        ("a.py", "b.py", 3, 4, 4)
    ]
    assert pairs[0].confidence == pytest.approx(0.75)
    assert pairs[0].last_time == 3 * DAY
    # a.py and c.py: support 2 (below 3); b.py and d.py: support 1.
    assert cochange_pairs(touches(commits), existing={"a.py", "c.py", "d.py"}) == []


def test_cochange_recency_halves_with_each_half_life_and_ranks_pairs() -> None:
    old = [commit(n, "old", "x.py", "y.py", day=n) for n in range(1, 5)]
    new = [commit(n, "new", "p.py", "q.py", day=180 + n) for n in range(5, 9)]
    pairs = cochange_pairs(touches([*old, *new]))
    assert [(p.file_a, p.file_b) for p in pairs] == [("p.py", "q.py"), ("x.py", "y.py")]
    assert pairs[1].recency == pytest.approx(0.5 ** ((188 - 2.5) / 180), rel=1e-3)
    assert pairs[0].recency > 0.98


def test_hotspots_need_two_fixes_that_are_a_fifth_of_the_changes_and_skip_test_files() -> None:
    commits = [
        commit(1, "add parser", "parser.py", "cli.py"),
        commit(2, "Fix parser crash", "parser.py", "tests/test_parser.py"),
        commit(3, "fix: parser again", "parser.py", "tests/test_parser.py"),
        commit(4, "Fix cli typo", "cli.py"),
        *(commit(n, "grow cli", "cli.py") for n in range(5, 15)),
        commit(15, "Fix cli once more", "cli.py"),
    ]
    spots = hotspots(touches(commits))
    assert [(s.path, s.fixes, s.changes) for s in spots] == [("parser.py", 2, 3)]
    assert spots[0].fix_ratio == pytest.approx(2 / 3)
    assert spots[0].last_fix.subject == "fix: parser again"
    assert hotspots(touches(commits), existing={"cli.py"}) == []


def test_a_file_fixed_no_more_often_than_the_whole_repository_is_no_hotspot() -> None:
    commits = [
        commit(n, "Fix a thing" if n % 2 else "Add a thing", "core.py" if n <= 4 else "other.py", f"f{n}.py")
        for n in range(1, 13)
    ]
    # Half of all commits are fixes: core.py (2 fixes of 4 changes) is ordinary, not a hotspot.
    assert hotspots(touches(commits)) == []
    calmer = [*commits, *(commit(n, "Add more", f"g{n}.py") for n in range(13, 25))]
    assert [(h.path, h.fixes) for h in hotspots(touches(calmer))] == [("other.py", 4), ("core.py", 2)]


def test_solutions_describe_the_shape_of_each_fix_newest_first() -> None:
    commits = [
        commit(1, "add", "a.py"),
        commit(2, "Fix overflow\n\nUse a wider integer.", "a.py", "tests/test_a.py"),
        commit(3, "Fix docs", "README.md"),
        merge(4, 3),
    ]
    found = solutions(touches(commits))
    assert [s.commit.subject for s in found] == ["Fix docs", "Fix overflow"]
    overflow = found[1]
    assert overflow.commit.body == "Use a wider integer."
    assert (overflow.files, overflow.lines_added, overflow.lines_deleted) == (
        ("a.py", "tests/test_a.py"),
        6,
        2,
    )
    assert overflow.test_files == ("tests/test_a.py",)


def test_find_patterns_limits_cochanges_and_hotspots_to_files_at_head() -> None:
    commits = [commit(n, "Fix it", "gone.py", "kept.py", "also.py") for n in range(1, 4)]
    commits += [commit(n, "Write docs", "docs.md") for n in range(4, 7)]
    patterns = find_patterns(commits, existing={"kept.py", "also.py", "docs.md"})
    assert [(p.file_a, p.file_b) for p in patterns.cochanges] == [("also.py", "kept.py")]
    assert [h.path for h in patterns.hotspots] == ["also.py", "kept.py"]
    assert len(patterns.solutions) == 3 and "gone.py" in patterns.solutions[0].files
