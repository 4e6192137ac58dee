"""Loading markdown trees into a real store (SQLite + Qdrant Edge), incrementally and atomically."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from cognitive_memory.core.memory import SourceKind
from cognitive_memory.errors import InvalidInputError, StorageError
from cognitive_memory.loaders import load_markdown, remove_markdown
from cognitive_memory.loaders.watch import apply_changes
from cognitive_memory.storage import sources as source_sql
from cognitive_memory.system import CognitiveSystem

FILLER = "Enough words to make this section stand on its own as a chunk of the document. " * 2


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    _write(
        root / "guide.md",
        f"# Guide\n\n{FILLER}\n\n## Install\n\n{FILLER}See [the FAQ](faq/faq.md).\n\n## Usage\n\n{FILLER}",
    )
    _write(root / "faq" / "faq.md", f"# FAQ\n\n{FILLER}\n\n## Tokens\n\n{FILLER}")
    _write(root / "plain.markdown", "A note without any header, long enough to be worth keeping around.")
    _write(root / "ignored.txt", "not markdown")
    _write(root / ".hidden" / "secret.md", "# Secret\n\nnot loaded")
    return root


def _by_section(system: CognitiveSystem) -> dict[str, str]:
    return {
        f"{Path(m.origin or '').name}:{m.metadata['section']}": m.id
        for batch in system.records.memories.batches()
        for m in batch
    }


def test_a_tree_loads_every_section_once_with_its_source(hash_system: CognitiveSystem, tree: Path) -> None:
    report = load_markdown(hash_system.loaded, tree)
    assert (report.files, report.files_loaded, report.chunks.added, report.skipped) == (3, 3, 6, ())
    assert set(_by_section(hash_system)) == {
        "guide.md:Guide",
        "guide.md:Install",
        "guide.md:Usage",
        "faq.md:FAQ",
        "faq.md:Tokens",
        "plain.markdown:plain",
    }
    memories = [m for batch in hash_system.records.memories.batches() for m in batch]
    memory = next(m for m in memories if m.metadata["section"] == "Install")
    assert memory.source is SourceKind.MARKDOWN
    assert memory.origin == str(tree.resolve() / "guide.md")
    assert memory.shown_metadata["loader_type"] == "markdown"
    assert memory.shown_metadata["source_path"] == str(tree.resolve() / "guide.md")
    assert hash_system.status().healthy


def test_a_second_load_of_an_unchanged_tree_changes_nothing(hash_system: CognitiveSystem, tree: Path) -> None:
    load_markdown(hash_system.loaded, tree)
    before = {m.id: m for b in hash_system.records.memories.batches() for m in b}
    report = load_markdown(hash_system.loaded, tree)
    assert (report.files_loaded, report.files_unchanged) == (0, 3)
    assert (report.chunks.added, report.chunks.updated, report.chunks.removed, report.chunks.unchanged) == (
        0,
        0,
        0,
        6,
    )
    after = {m.id: m for b in hash_system.records.memories.batches() for m in b}
    assert after == before


def test_an_edit_updates_exactly_the_changed_section_and_keeps_the_others(
    hash_system: CognitiveSystem, tree: Path
) -> None:
    load_markdown(hash_system.loaded, tree)
    before = _by_section(hash_system)
    guide = tree / "guide.md"
    guide.write_text(guide.read_text().replace("## Usage\n\n", "## Usage\n\nRun it daily. "))
    report = load_markdown(hash_system.loaded, tree)
    counts = report.chunks
    assert (report.files_loaded, counts.updated, counts.added, counts.removed) == (1, 1, 0, 0)
    assert _by_section(hash_system) == before
    usage = hash_system.records.memories.get([before["guide.md:Usage"]])[0]
    assert "Run it daily." in usage.content and usage.modified_date is not None


def test_added_and_deleted_sections_and_files_are_followed(hash_system: CognitiveSystem, tree: Path) -> None:
    load_markdown(hash_system.loaded, tree)
    guide = tree / "guide.md"
    text = guide.read_text()
    guide.write_text(text[: text.index("## Usage")] + f"## Upgrade\n\n{FILLER}")
    (tree / "plain.markdown").unlink()
    report = load_markdown(hash_system.loaded, tree)
    counts = report.chunks
    # Upgrade took the place of Usage: a renamed header updates the memory in place.
    assert (report.files_removed, counts.added, counts.updated, counts.removed) == (1, 0, 1, 1)
    sections = set(_by_section(hash_system))
    assert "guide.md:Upgrade" in sections
    assert not {"guide.md:Usage", "plain.markdown:plain"} & sections
    assert hash_system.status().healthy


def test_remove_file_forgets_a_file_or_a_directory(hash_system: CognitiveSystem, tree: Path) -> None:
    load_markdown(hash_system.loaded, tree)
    assert remove_markdown(hash_system.loaded, tree / "faq") == (1, 2)
    assert remove_markdown(hash_system.loaded, tree / "guide.md") == (1, 3)
    assert remove_markdown(hash_system.loaded, tree / "nothing-here.md") == (0, 0)
    assert set(_by_section(hash_system)) == {"plain.markdown:plain"}
    assert hash_system.status().healthy


def test_sections_are_connected_in_their_file_and_along_links(
    hash_system: CognitiveSystem, tree: Path
) -> None:
    load_markdown(hash_system.loaded, tree)
    ids = _by_section(hash_system)
    graph = hash_system.records.links.neighbours(list(ids.values()))
    install = dict(graph[ids["guide.md:Install"]])
    assert ids["guide.md:Guide"] in install
    assert ids["guide.md:Usage"] in install
    assert ids["faq.md:FAQ"] in install
    assert ids["guide.md:Install"] in dict(graph[ids["faq.md:FAQ"]])


def test_a_link_to_a_file_loaded_later_is_connected_then(
    hash_system: CognitiveSystem, tmp_path: Path
) -> None:
    source = _write(tmp_path / "a" / "a.md", f"# A\n\n{FILLER} See [b](../b/b.md).")
    target = _write(tmp_path / "b" / "b.md", f"# B\n\n{FILLER}")
    load_markdown(hash_system.loaded, source)
    load_markdown(hash_system.loaded, target)
    ids = _by_section(hash_system)
    assert ids["b.md:B"] in dict(hash_system.records.links.neighbours([ids["a.md:A"]])[ids["a.md:A"]])


def test_a_failed_sync_leaves_the_previous_memories_whole(
    hash_system: CognitiveSystem, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_markdown(hash_system.loaded, tree)
    before = _by_section(hash_system)
    guide = tree / "guide.md"
    guide.write_text(guide.read_text().replace("## Usage", "## Usage changed") + "\n\n## New\n\n" + FILLER)

    def broken(*_args: object) -> list[str]:
        raise StorageError("disk full")

    monkeypatch.setattr(source_sql, "write_source", broken)
    with pytest.raises(StorageError):
        load_markdown(hash_system.loaded, tree)
    assert _by_section(hash_system) == before
    monkeypatch.undo()
    counts = load_markdown(hash_system.loaded, tree).chunks
    assert (counts.added, counts.updated, counts.removed) == (1, 1, 0)


def test_unreadable_files_are_skipped_with_a_reason_and_the_rest_loads(
    hash_system: CognitiveSystem, tree: Path, tmp_path: Path
) -> None:
    (tree / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (tree / "latin1.md").write_bytes("# Caf\xe9\n".encode("latin-1"))
    os.mkfifo(tree / "pipe.md")
    outside = _write(tmp_path / "outside" / "secret.md", "# Secret\n\noutside the tree")
    os.symlink(outside, tree / "link-out.md")
    os.symlink(tree / "loop-b.md", tree / "loop-a.md")
    os.symlink(tree / "loop-a.md", tree / "loop-b.md")
    os.symlink(tree / "missing.md", tree / "dangling.md")
    os.symlink(tree / "faq", tree / "faq-again")
    os.symlink(tree / "guide.md", tree / "guide-alias.md")
    report = load_markdown(hash_system.loaded, tree)
    reasons = {Path(item.path).name: item.reason for item in report.skipped}
    assert reasons["binary.md"].startswith("binary file")
    assert reasons["latin1.md"].startswith("not UTF-8 text")
    assert reasons["link-out.md"].endswith("outside the loaded tree")
    assert reasons["loop-a.md"] == reasons["loop-b.md"] == "symlink loop"
    assert reasons["dangling.md"] == "broken symlink"
    assert reasons["faq-again"] == "symlinked directory, not followed"
    assert reasons["pipe.md"] == "not a regular file"
    assert report.chunks.added == 6
    assert "secret.md:Secret" not in _by_section(hash_system)


def test_a_path_that_does_not_exist_is_an_error(hash_system: CognitiveSystem, tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="does not exist"):
        load_markdown(hash_system.loaded, tmp_path / "nowhere")


def test_watch_batches_follow_moved_in_and_deleted_directories(
    hash_system: CognitiveSystem, tree: Path, tmp_path: Path
) -> None:
    root = tree.resolve()
    load_markdown(hash_system.loaded, root)
    incoming = _write(tmp_path / "elsewhere" / "new" / "deep" / "n.md", f"# New\n\n{FILLER}").parents[1]
    incoming.rename(root / "new")
    batch = apply_changes(hash_system.loaded, root, [root / "new"])
    assert (batch.chunks.added, batch.changed) == (1, (str(root / "new" / "deep" / "n.md"),))
    shutil.rmtree(root / "faq")
    batch = apply_changes(hash_system.loaded, root, [root / "faq"])
    assert (batch.removed, batch.chunks.removed) == ((str(root / "faq"),), 2)
    assert "faq.md:FAQ" not in _by_section(hash_system) and "n.md:New" in _by_section(hash_system)


def test_progress_counts_kilobytes_stored_up_to_the_whole_tree(
    hash_system: CognitiveSystem, tmp_path: Path
) -> None:
    root = tmp_path / "big"
    root.mkdir()
    for n in range(3):
        sections = "\n\n".join(
            f"## Part {i}\n\n" + f"Sentence {n}-{i} about the deploy pipeline. " * 20 for i in range(8)
        )
        (root / f"file{n}.md").write_text(f"# File {n}\n\n{sections}\n")
    total_kb = -(-sum(path.stat().st_size for path in root.iterdir()) // 1024)
    seen: list[tuple[int, int]] = []

    load_markdown(hash_system.loaded, root, on_progress=lambda done, total: seen.append((done, total)))
    again: list[tuple[int, int]] = []
    load_markdown(hash_system.loaded, root, on_progress=lambda done, total: again.append((done, total)))

    assert {total for _, total in seen} == {total_kb} and total_kb > 3
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    assert seen[-1] == (total_kb, total_kb) and again[-1] == (total_kb, total_kb)
