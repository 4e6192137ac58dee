"""bench/locomo_move.py's counts of a store: every table the move copies, the links of each kind,
the named links of each relation, the memories with a key and the uses."""

from __future__ import annotations

from pathlib import Path

from bench.locomo_move import counts
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.lifecycle.forgetting import trash
from cognitive_memory.linking import link
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from cognitive_memory.storage.moving import COPIED


def test_the_counts_of_a_store_name_its_links_by_kind_its_keys_and_its_uses(data_dir: Path) -> None:
    settings = Settings(env_file=None)
    system = build_system(settings, encoder=HashEncoder())
    try:
        first = system.store("The deploy window is Tuesday at noon.", session_id="s1").memory.id
        second = system.store("Release notes go out on Fridays.", session_id="s1").memory.id
        system.store("The coding style is tabs.", key="coding-style")
        system.store("The coding style is four spaces.", key="coding-style")
        link(system.records, first, second, "depends_on")
        trash(system, [system.store("The plants are watered on Fridays.").memory.id], "forgotten", None)
        system.retrieve("deploy window release notes")
        system.flush()
    finally:
        system.close()

    counted = counts(settings)

    assert {table for table, _ in COPIED} <= counted.keys()
    assert counted["memories"] == 3 and counted["trash"] == 1 and counted["memory_versions"] == 1
    assert counted["memories with a key"] == 1 and counted["relations/depends_on"] == 1
    assert counted["connections/temporal"] >= 1
    assert counted["uses (access counts summed)"] >= 1
    assert sum(n for name, n in counted.items() if name.startswith("connections/")) == counted["connections"]
