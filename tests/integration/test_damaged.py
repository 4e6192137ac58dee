"""Every reader of the memories survives a row no command writes, and doctor's scan names it
(storage/damaged.py; issue #27)."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import pytest

from cognitive_memory.core.pruning import PruneCriteria
from cognitive_memory.index import VectorFilter
from cognitive_memory.lifecycle.consolidation import apply_plan, plan_consolidation
from cognitive_memory.lifecycle.forgetting import plan_prune
from cognitive_memory.system import CognitiveSystem
from tests.damaging import BAD_TEXT, DAMAGES, write_bad_row

FACT = "The staging cluster autoscaler never scales below three nodes."


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_every_reader_leaves_a_damaged_row_out_and_doctor_sets_it_aside(
    hash_system: CognitiveSystem, damage: str
) -> None:
    system = hash_system
    kept = system.store(FACT, tags=["ops"]).memory
    system.store(FACT + " Really.", tags=["ops"])  # a near duplicate, for consolidation
    bad_id = write_bad_row(system.records.path, kept, damage)
    tagged = VectorFilter(tags=("ops",))

    system.retrieve(BAD_TEXT, where=tagged)  # the bad row's own words, with and without a tag filter
    system.retrieve(BAD_TEXT)
    assert system.records.memories.browse(tagged, "created", 10).memories
    apply_plan(system, plan_consolidation(system, threshold=0.5), None)
    assert plan_prune(system, PruneCriteria(max_importance=1.0, tags=("ops",))).matching >= 1
    assert [bad.id for bad in system.records.damaged.find(system.encoder.dimension)] == [bad_id]
    assert system.records.memories.get([kept.id]) or system.records.trash.find(
        [kept.id]
    )  # merged, never lost

    assert system.records.damaged.set_aside(system.records.damaged.find()) == [bad_id]
    assert system.records.damaged.find() == []
    with closing(sqlite3.connect(system.records.path)) as conn:
        (row,) = conn.execute("SELECT id, content, problem FROM set_aside").fetchall()
    assert row[:2] == (bad_id, BAD_TEXT)
    assert system.records.damaged.set_aside_count() == 1
