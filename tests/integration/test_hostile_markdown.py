"""Markdown that would not fit a memory, and names that are not text, in a real store (issue #15)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cognitive_memory.core.validation import MAX_TEXT_CHARS
from cognitive_memory.errors import InvalidInputError
from cognitive_memory.loaders import load_markdown, remove_markdown
from cognitive_memory.loaders.files import MAX_FILE_BYTES
from cognitive_memory.loaders.watch import apply_changes
from cognitive_memory.system import CognitiveSystem

LINE = "value = compute(alpha, beta, gamma)  # one row of a generated table, kept as it is\n"
MARKER = "checksum = 'the-one-line-deep-inside-the-block'\n"
AFTER = "## After the block\n\nThe section after the huge block is loaded too, and can be found.\n"


def _contents(system: CognitiveSystem) -> list[str]:
    return [memory.content for batch in system.records.memories.batches() for memory in batch]


@pytest.mark.slow
def test_a_3_mb_fenced_block_is_split_at_line_ends_and_the_whole_tree_loads(
    hash_system: CognitiveSystem, tmp_path: Path
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    rows = LINE * (1_500_000 // len(LINE))
    block = "```python\n" + rows + MARKER + rows + "```\n"
    big = root / "generated.md"
    big.write_text(
        f"# Generated\n\nA table dumped from the build, kept for reference.\n\n## Data\n\n{block}\n{AFTER}"
    )
    assert 3_000_000 < big.stat().st_size < MAX_FILE_BYTES
    (root / "small.md").write_text("# Small\n\nA small note beside the big one, which must load as well.\n")

    report = load_markdown(hash_system.loaded, root)

    assert report.skipped == ()
    assert (report.files_loaded, report.chunks.added) == (2, hash_system.records.memories.counts().total)
    contents = _contents(hash_system)
    assert max(map(len, contents)) <= MAX_TEXT_CHARS
    assert sum(MARKER.strip() in content for content in contents) == 1
    assert any("The section after the huge block is loaded too" in content for content in contents)
    assert any("A small note beside the big one" in content for content in contents)
    # Every row of the block is in some memory, whole (the cuts fall at line ends).
    assert sum(content.count(LINE.strip()) for content in contents) == rows.count("\n") * 2
    again = load_markdown(hash_system.loaded, root)
    assert (again.files_unchanged, again.chunks.added, again.chunks.removed) == (2, 0, 0)


def test_a_file_whose_header_alone_is_over_the_memory_limit_is_skipped_by_name_and_the_rest_loads(
    hash_system: CognitiveSystem, tmp_path: Path
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    odd = root / "odd.md"
    odd.write_text(
        "# Intro\n\nSome text.\n\n## " + "word " * 30_000 + "\n\nBody under a header of 150,000 characters.\n"
    )
    (root / "small.md").write_text("# Small\n\nA small note beside the odd one, which must load as well.\n")
    report = load_markdown(hash_system.loaded, root)
    (skipped,) = report.skipped
    assert skipped.path == str(odd)
    assert "cannot be stored" in skipped.reason and "the limit is 100,000" in skipped.reason
    assert report.chunks.added == 1
    assert any("A small note beside the odd one" in content for content in _contents(hash_system))


def test_names_that_are_not_utf8_are_skipped_by_load_watch_batches_and_remove(
    hash_system: CognitiveSystem, tmp_path: Path
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "good.md").write_text("# Good\n\nA note with a UTF-8 name, which loads.\n")
    raw = os.path.join(os.fsencode(root), b"na\xefve.md")
    with open(raw, "wb") as file:
        file.write(b"# Naive\n\nA note whose name is Latin-1.\n")
    odd = Path(os.fsdecode(raw))

    report = load_markdown(hash_system.loaded, root)
    assert [(s.path, s.reason.split(":")[0]) for s in report.skipped] == [
        (f"{root}/na\\xefve.md", "file name is not UTF-8 (bytes that are not are shown as \\xNN)")
    ]
    assert report.chunks.added == 1

    batch = apply_changes(hash_system.loaded, root, [odd, root / "good.md"])
    assert [s.path for s in batch.skipped] == [f"{root}/na\\xefve.md"]
    # A link with a good name to a file with an odd one is skipped too, in a load and in a batch.
    (root / "link.md").symlink_to(odd)
    linked = load_markdown(hash_system.loaded, root)
    assert f"{root}/link.md" in [s.path for s in linked.skipped]
    batch = apply_changes(hash_system.loaded, root, [root / "link.md"])
    assert [s.path for s in batch.skipped] == [f"{root}/na\\xefve.md"]

    with pytest.raises(InvalidInputError, match=r"na\\xefve\.md: .* nothing to remove"):
        remove_markdown(hash_system.loaded, odd)
    assert hash_system.records.memories.counts().total == 1
