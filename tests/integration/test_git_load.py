"""git-load on a real repository built in the test: exact patterns, incremental and rewritten
history, through the real SQLite store and embedded Qdrant (hash encoder: this is plumbing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cognitive_memory.core.sources import SyncCounts
from cognitive_memory.errors import InvalidInputError
from cognitive_memory.loaders import load_git
from cognitive_memory.system import CognitiveSystem
from tests.gitrepo import GitRepo, build_sample_history


def git_memories(system: CognitiveSystem, repo: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    """chunk key -> (content, metadata as answers show it) of the repository's stored memories."""
    rows = system.records.sources.chunks(f"git:{repo.resolve()}")
    memories = {m.id: m for m in system.records.memories.get([row.memory_id for row in rows])}
    return {
        row.chunk_key: (memories[row.memory_id].content, memories[row.memory_id].shown_metadata)
        for row in rows
    }


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return build_sample_history(tmp_path / "toolkit")


def test_first_load_finds_the_exact_patterns(hash_system: CognitiveSystem, repo: GitRepo) -> None:
    report = load_git(hash_system.loaded, repo.path / "src")
    assert (report.commits_read, report.commits_total, report.full_walk) == (11, 11, True)
    assert (report.cochanges, report.hotspots, report.solutions) == (2, 1, 2)
    assert report.memories == SyncCounts(added=5)
    stored = git_memories(hash_system, repo.path)
    fix_sha = repo.git("rev-parse", "topic")
    first_fix = repo.git("log", "--format=%H", "--grep", "Fix crash")
    assert list(stored) == [
        "cochange:src/lexer.py|src/parser.py",
        "cochange:README.md|src/cli.py",
        "hotspot:src/parser.py",
        f"solution:{fix_sha}",
        f"solution:{first_fix}",
    ]
    content, meta = stored["cochange:src/lexer.py|src/parser.py"]
    assert content == (
        "Files src/lexer.py and src/parser.py in toolkit change together: 4 of the 4 commits that change "
        "src/lexer.py also change src/parser.py (4 commits change src/lexer.py, 5 change src/parser.py). "
        "Last changed together on 2024-01-09. When you edit one, check the other."
    )
    assert meta == {
        "loader_type": "git",
        "pattern_type": "cochange",
        "repository": "toolkit",
        "repository_path": str(repo.path.resolve()),
        "file_a": "src/lexer.py",
        "file_b": "src/parser.py",
        "support": 4,
        "changes_a": 4,
        "changes_b": 5,
        "confidence": 1.0,
        "last_changed": "2024-01-09",
    }
    # The history of src/old_cli.py counts under src/cli.py (renamed on day 6).
    cli_meta = stored["cochange:README.md|src/cli.py"][1]
    assert (cli_meta["support"], cli_meta["changes_a"], cli_meta["changes_b"], cli_meta["confidence"]) == (
        3,
        4,
        4,
        0.75,
    )
    hotspot, hot_meta = stored["hotspot:src/parser.py"]
    assert hotspot.startswith(
        "src/parser.py in toolkit keeps needing fixes: 2 of its 5 changes were fixes (40%)."
    )
    assert hotspot.endswith(f"({fix_sha[:10]}): Fix unicode handling in the lexer")
    assert (hot_meta["fixes"], hot_meta["changes"], hot_meta["fix_ratio"]) == (2, 5, 0.4)


def test_solution_memory_holds_the_message_and_the_shape_of_the_change(
    hash_system: CognitiveSystem, repo: GitRepo
) -> None:
    load_git(hash_system.loaded, repo.path)
    fix_sha = repo.git("rev-parse", "topic")
    content, meta = git_memories(hash_system, repo.path)[f"solution:{fix_sha}"]
    assert content == (
        f"Fix in toolkit on 2024-01-09 ({fix_sha[:10]}): Fix unicode handling in the lexer\n\n"
        "The fix changed 3 files (+3 -0 lines): src/lexer.py, src/parser.py, tests/test_parser.py. "
        "Tests changed: tests/test_parser.py."
    )
    assert meta["solution_type"] == "fix with tests"
    assert (meta["files_changed"], meta["lines_added"], meta["test_files"]) == (
        3,
        3,
        ["tests/test_parser.py"],
    )


def test_a_rerun_without_new_commits_changes_nothing(hash_system: CognitiveSystem, repo: GitRepo) -> None:
    load_git(hash_system.loaded, repo.path)
    before = git_memories(hash_system, repo.path)
    again = load_git(hash_system.loaded, repo.path)
    assert (again.commits_read, again.commits_total, again.full_walk) == (0, 11, False)
    assert (again.cochanges, again.hotspots, again.solutions) == (2, 1, 2)
    assert again.memories == SyncCounts(unchanged=5)
    assert git_memories(hash_system, repo.path) == before


def test_a_new_commit_is_read_alone_and_updates_only_what_it_touches(
    hash_system: CognitiveSystem, repo: GitRepo
) -> None:
    load_git(hash_system.loaded, repo.path)
    before = git_memories(hash_system, repo.path)
    sha = repo.commit("Fix parser error messages", 12, "src/parser.py")
    report = load_git(hash_system.loaded, repo.path)
    assert (report.commits_read, report.commits_total, report.full_walk) == (1, 12, False)
    assert report.memories == SyncCounts(added=1, updated=2, unchanged=3)
    after = git_memories(hash_system, repo.path)
    assert after["hotspot:src/parser.py"][1]["fixes"] == 3
    assert after["cochange:src/lexer.py|src/parser.py"][1]["changes_b"] == 6
    assert f"solution:{sha}" in after
    assert after["cochange:README.md|src/cli.py"] == before["cochange:README.md|src/cli.py"]


def test_a_branch_merged_after_a_load_is_read_with_its_merge_only(
    hash_system: CognitiveSystem, repo: GitRepo
) -> None:
    repo.git("checkout", "--quiet", "-b", "late")
    fix = repo.commit("Fix lexer tokens", 12, "src/lexer.py")
    repo.git("checkout", "--quiet", "main")
    repo.commit("Polish the README", 13, "README.md")
    first = load_git(hash_system.loaded, repo.path)
    assert first.commits_total == 12 and f"solution:{fix}" not in git_memories(hash_system, repo.path)
    repo.git("merge", "--quiet", "--no-ff", "-m", "Merge branch 'late'", "late", day=14)
    report = load_git(hash_system.loaded, repo.path)
    assert (report.commits_read, report.commits_total, report.full_walk) == (2, 14, False)
    assert f"solution:{fix}" in git_memories(hash_system, repo.path)


def test_a_rewritten_history_is_read_again_in_full(hash_system: CognitiveSystem, repo: GitRepo) -> None:
    dropped = repo.commit("Fix parser error messages", 12, "src/parser.py")
    load_git(hash_system.loaded, repo.path)
    repo.git("reset", "--quiet", "--hard", "HEAD~1")
    repo.commit("Tidy the parser", 12, "src/parser.py")
    report = load_git(hash_system.loaded, repo.path)
    assert (report.commits_read, report.commits_total, report.full_walk) == (12, 12, True)
    assert report.memories == SyncCounts(updated=1, removed=1, unchanged=4)
    after = git_memories(hash_system, repo.path)
    assert f"solution:{dropped}" not in after
    assert after["hotspot:src/parser.py"][1]["fixes"] == 2


def test_an_amended_last_commit_is_followed(hash_system: CognitiveSystem, repo: GitRepo) -> None:
    load_git(hash_system.loaded, repo.path)
    repo.git("commit", "--quiet", "--amend", "-m", "Fix the flag descriptions", day=11)
    report = load_git(hash_system.loaded, repo.path)
    assert report.full_walk and report.solutions == 3
    assert report.memories == SyncCounts(added=1, unchanged=5)


def test_a_directory_that_is_not_a_repository_is_refused(
    hash_system: CognitiveSystem, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    (tmp_path / "plain").mkdir()
    with pytest.raises(InvalidInputError, match="is not a git repository") as caught:
        load_git(hash_system.loaded, tmp_path / "plain")
    assert caught.value.code == "not_a_repository"


def test_a_repository_without_commits_loads_nothing(hash_system: CognitiveSystem, tmp_path: Path) -> None:
    empty = GitRepo(tmp_path / "empty")
    report = load_git(hash_system.loaded, empty.path)
    assert report.head is None and report.commits_read == 0 and report.memories == SyncCounts()


def test_a_missing_git_is_reported_clearly(
    hash_system: CognitiveSystem, repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-binaries-here"))
    with pytest.raises(InvalidInputError, match="git is not installed"):
        load_git(hash_system.loaded, repo.path)
