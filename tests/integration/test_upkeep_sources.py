"""The doctor's ``sources`` check: loaded memories that no source holds (the duplicates two racing
loads used to leave, issue #15) are reported, and ``--repair`` deletes them."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from cognitive_memory.encoding import SentenceBertEncoder
from cognitive_memory.loaders import load_markdown
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from cognitive_memory.upkeep import CheckResult, check_loaded_sources


def _sources(encoder: SentenceBertEncoder, repair: bool = False) -> CheckResult:
    """The check, over the data directory's memory (as ``doctor`` opens it)."""
    system = build_system(Settings(env_file=None), encoder=encoder)
    try:
        return check_loaded_sources(system, repair)
    finally:
        system.close()


def _damage_like_two_racing_loads(database: Path) -> None:
    """What the second of two concurrent loads left: its chunk table replaced the first's, whose
    memories stayed behind. Here: forget the chunk table, then load again."""
    with closing(sqlite3.connect(database)) as conn, conn:
        conn.execute("DELETE FROM source_chunks")
        conn.execute("DELETE FROM sources")


def test_orphaned_loaded_memories_warn_until_repair_deletes_them(
    tmp_path: Path, data_dir: Path, real_encoder: SentenceBertEncoder
) -> None:
    tree = tmp_path / "notes"
    tree.mkdir()
    for name in ("deploy", "backup", "oncall"):
        (tree / f"{name}.md").write_text(
            f"# {name.title()}\n\nHow we handle {name} in the team, in a sentence.\n"
        )
    system = build_system(Settings(env_file=None), encoder=real_encoder)
    try:
        load_markdown(system.loaded, tree)
        _damage_like_two_racing_loads(system.records.path)
        load_markdown(system.loaded, tree)
        assert system.records.memories.counts().total == 6
    finally:
        system.close()

    damaged = _sources(real_encoder)
    assert damaged.status == "warn"
    assert damaged.detail.startswith("3 loaded memories belong to no loaded file or repository")
    assert "memory_system doctor --repair" in damaged.detail

    repaired = _sources(real_encoder, repair=True)
    assert (repaired.status, repaired.detail.split(" (")[0]) == (
        "ok",
        "removed 3 loaded memories that no loaded source held",
    )
    assert _sources(real_encoder).status == "ok"
    system = build_system(Settings(env_file=None), encoder=real_encoder)
    try:
        assert system.records.memories.counts().total == 3
        assert load_markdown(system.loaded, tree).files_unchanged == 3
    finally:
        system.close()
