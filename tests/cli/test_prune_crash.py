"""kill -9 during a real prune: the store holds the old state or the new one, never part of it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cognitive_memory.encoding import HashEncoder
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from tests.killing import run_memory_system

PRUNED = 1000  # what one prune takes at most

PRUNE = ("prune", "--older-than-days", "0", "--apply")


def _counts(directory: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """(memories left, memories in the trash)."""
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(directory))
    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        return system.records.memories.counts().total, system.records.trash.entries(1)[1]
    finally:
        system.close()


@pytest.mark.subprocess
def test_kill_9_during_a_prune_leaves_the_old_state_or_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    template = tmp_path / "template"
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(template))
    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    system.store_many([f"Scratch note {n}: try the {n}th build flag." for n in range(PRUNED)])
    system.close()

    def run(directory: Path, kill_after: float | None) -> float:
        shutil.copytree(template, directory)
        return run_memory_system(directory, PRUNE, kill_after)

    whole = run(tmp_path / "whole", None)
    assert _counts(tmp_path / "whole", monkeypatch) == (0, PRUNED)

    states = set()
    for n, share in enumerate((0.3, 0.5, 0.65, 0.8, 0.9, 0.95)):
        run(tmp_path / f"killed-{n}", whole * share)
        states.add(_counts(tmp_path / f"killed-{n}", monkeypatch))
    # Whichever moment the kill hit, every memory is either still stored or in the trash, and
    # either all of them moved or none did.
    assert states <= {(PRUNED, 0), (0, PRUNED)}, states
