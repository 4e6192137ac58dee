"""The command line reference (docs/cli-reference.md) is the commands' --help, kept up to date."""

from __future__ import annotations

from pathlib import Path

from memory_system.cli import app
from memory_system.reference import render, write

PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli-reference.md"


def test_the_committed_reference_is_the_help_of_every_command() -> None:
    assert PAGE.read_text(encoding="utf-8") == render(app), (
        "docs/cli-reference.md is out of date: run `python -m memory_system.reference` (or `make docs`)"
    )


def test_the_reference_has_every_sub_command_in_plain_text() -> None:
    page = render(app)

    for path in ("memory_system doctor", "memory_system qdrant migrate", "memory_system trash empty"):
        assert f"\n## {path}\n\n```text\nUsage: {path} [OPTIONS]" in page
    assert "--repair  Rebuild the vector index from the vectors kept in SQLite." in page
    assert not any(char in page for char in "\x1b╭│╰─")
    assert all(len(line) <= 100 for line in page.splitlines())


def test_writing_an_up_to_date_page_changes_nothing(tmp_path: Path) -> None:
    page = tmp_path / "cli-reference.md"

    assert write(app, page) is True
    assert write(app, page) is False
    assert page.read_text(encoding="utf-8") == render(app)
