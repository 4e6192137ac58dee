"""A real git repository for tests, with fixed authors and dates so every run is identical."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["GitRepo", "build_sample_history"]


class GitRepo:
    """A repository in ``path``; each commit writes files and is dated 2024-01-01 plus ``day``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "--quiet", "--initial-branch=main")

    def git(self, *args: str, day: int = 0) -> str:
        stamp = f"{1704110400 + day * 86400} +0000"
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "Ada",
            "GIT_AUTHOR_EMAIL": "ada@example.com",
            "GIT_COMMITTER_NAME": "Ada",
            "GIT_COMMITTER_EMAIL": "ada@example.com",
            "GIT_AUTHOR_DATE": stamp,
            "GIT_COMMITTER_DATE": stamp,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
        }
        result = subprocess.run(["git", "-C", str(self.path), *args], env=env, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)}: {result.stderr}")
        return result.stdout.strip()

    def commit(self, message: str, day: int, *paths: str) -> str:
        """Append a line to each path (creating it) and commit them; returns the sha."""
        for name in paths:
            path = self.path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as file:
                file.write(f"{message} ({day})\n")
        self.git("add", "--", *paths)
        self.git("commit", "--quiet", "-m", message, day=day)
        return self.git("rev-parse", "HEAD")


def build_sample_history(path: Path) -> GitRepo:
    """Eleven commits with known patterns (tests/integration/test_git_load.py spells them out):
    parser and lexer change together 4 of 4 times, README and the command line 3 times across a
    rename, a huge vendoring commit, two fixes (one on a merged branch) and a merge."""
    repo = GitRepo(path)
    repo.commit("Add parser and lexer", 1, "src/parser.py", "src/lexer.py", "README.md")
    repo.commit("Teach the parser numbers", 2, "src/parser.py", "src/lexer.py")
    repo.commit("Add the command line", 3, "src/old_cli.py", "README.md")
    repo.commit("Fix crash on empty input", 4, "src/parser.py", "tests/test_parser.py")
    repo.commit("Parse strings", 5, "src/parser.py", "src/lexer.py")
    repo.git("mv", "src/old_cli.py", "src/cli.py")
    repo.git("commit", "--quiet", "-m", "Rename the command line module", day=6)
    vendored = [f"vendor/lib{i}.js" for i in range(31)]
    repo.commit("Vendor the json library", 7, *vendored, "src/parser.py", "src/lexer.py")
    repo.git("checkout", "--quiet", "-b", "topic")
    repo.commit(
        "Fix unicode handling in the lexer", 8, "src/lexer.py", "src/parser.py", "tests/test_parser.py"
    )
    repo.git("checkout", "--quiet", "main")
    repo.commit("Document the command line", 9, "src/cli.py", "README.md")
    repo.git("merge", "--quiet", "--no-ff", "-m", "Merge branch 'topic'", "topic", day=10)
    repo.commit("Describe the command line flags", 11, "src/cli.py", "README.md")
    return repo
