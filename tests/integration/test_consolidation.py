"""Consolidation over the store of record (SQLite, PostgreSQL) and Qdrant Edge with the hash
encoder, where a text and the same text with "!!" appended embed identically (cosine 1.0) and one
extra word stays above 0.92."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cognitive_memory import linking
from cognitive_memory.core.uses import Use
from cognitive_memory.lifecycle import consolidation, forgetting
from cognitive_memory.service import MemoryService
from cognitive_memory.storage import consolidation as consolidation_sql
from cognitive_memory.system import CognitiveSystem

pytestmark = pytest.mark.stores  # each test on SQLite and on PostgreSQL

BASE = "The API rate limit is 600 requests per minute for every client."
OTHER = "Deploys happen on Tuesdays after the standup."


def stored(system: CognitiveSystem, text: str, **fields: object) -> str:
    return system.store(text, **fields).memory.id  # type: ignore[arg-type]  # test helper passes keywords


def trash_row(system: CognitiveSystem, memory_id: str) -> tuple[str, str | None]:
    (row,) = system.records.trash.find([memory_id])
    return row.reason, row.consolidated_into


@pytest.fixture
def duplicates(hash_system: CognitiveSystem) -> dict[str, str]:
    ids = {
        "first": stored(hash_system, BASE, tags=["api"], importance_score=0.3),
        "loud": stored(hash_system, BASE + "!!", tags=["limits"], importance_score=0.9),
        "longer": stored(hash_system, BASE.replace("client.", "client today."), tags=["api", "ops"]),
        "unrelated": stored(hash_system, OTHER),
        "elsewhere": stored(hash_system, BASE + "!!", project="billing"),
        "elsewhere_too": stored(hash_system, BASE, project="other"),
    }
    uses = hash_system.records.memories.record_uses
    uses([Use((ids["loud"],), (), datetime(2026, 1, 1, tzinfo=UTC), 0.0)])
    uses([Use((ids["loud"], ids["longer"]), (), datetime(2026, 2, 1, tzinfo=UTC), 0.0)])
    return ids


def test_the_dry_run_finds_one_group_per_project_and_changes_nothing(
    hash_system: CognitiveSystem, duplicates: dict[str, str]
) -> None:
    before = hash_system.records.memories.counts().total

    plan = consolidation.plan_consolidation(hash_system)

    (group,) = plan.groups
    assert plan.threshold == 0.92
    assert group.project == "default"
    assert group.survivor.id == duplicates["loud"]  # the most accessed
    assert {m.id for m in group.others} == {duplicates["first"], duplicates["longer"]}
    assert all(m.similarity >= 0.92 for m in group.members)
    assert hash_system.records.memories.counts().total == before
    assert hash_system.records.trash.entries(10) == ([], 0)
    assert hash_system.records.properties.get("last_consolidation") is None


def test_apply_merges_tags_accesses_and_links_into_the_survivor(
    hash_system: CognitiveSystem, duplicates: dict[str, str]
) -> None:
    survivor, first, longer = duplicates["loud"], duplicates["first"], duplicates["longer"]
    linking.link(hash_system.records, duplicates["unrelated"], first, "relates_to")
    linking.link(hash_system.records, longer, duplicates["unrelated"], "caused_by")
    linking.link(hash_system.records, first, survivor, "supersedes")  # becomes a self-link: dropped

    (merged,) = consolidation.apply_plan(hash_system, consolidation.plan_consolidation(hash_system), "s1")

    assert (merged.survivor, set(merged.trashed), merged.links) == (survivor, {first, longer}, 2)
    (kept,) = hash_system.records.memories.get([survivor])
    assert set(kept.tags) == {"api", "limits", "ops"}
    assert kept.importance_score == 0.9
    assert kept.access_count == 3
    assert kept.last_accessed == datetime(2026, 2, 1, tzinfo=UTC)
    assert hash_system.records.memories.get([first, longer]) == []
    assert trash_row(hash_system, first) == ("consolidated", survivor)
    unrelated = duplicates["unrelated"]
    links = hash_system.records.links.outgoing([unrelated, survivor])
    assert {(row.from_id, row.to_id, row.relation) for group in links.values() for row in group} == {
        (unrelated, survivor, "relates_to"),
        (survivor, unrelated, "caused_by"),
    }
    assert len(hash_system.records.history.of([survivor])[survivor]) == 1
    assert hash_system.records.memories.get([duplicates["elsewhere"], duplicates["elsewhere_too"]])
    last = json.loads(hash_system.records.properties.get("last_consolidation") or "{}")
    assert (last["groups"], last["trashed"], last["links"]) == (1, 2, 2)


def test_a_consolidated_memory_comes_back_with_trash_restore(
    hash_system: CognitiveSystem, duplicates: dict[str, str]
) -> None:
    linking.link(hash_system.records, duplicates["first"], duplicates["unrelated"], "relates_to")
    consolidation.apply_plan(hash_system, consolidation.plan_consolidation(hash_system), None)

    restored = forgetting.restore(hash_system, [duplicates["first"]])

    (memory,) = hash_system.records.memories.get([duplicates["first"]])
    assert [memory_id for _, memory_id in restored.restored] == [duplicates["first"]]
    assert memory.content == BASE and memory.tags == ("api",)
    assert any(
        n.memory_id == duplicates["unrelated"]
        for n in linking.related(hash_system.records, duplicates["first"]).found
    )
    assert hash_system.records.trash.find([duplicates["first"]]) == []


def test_loaded_memories_are_never_candidates(hash_system: CognitiveSystem, tmp_path: Path) -> None:
    note = tmp_path / "notes.md"
    note.write_text("# Limits\n\n" + BASE + "\n")
    MemoryService(hash_system).load_markdown(str(note))
    (loaded,) = [m for batch in hash_system.records.memories.batches() for m in batch]
    stored(hash_system, loaded.content + "!!")

    plan = consolidation.plan_consolidation(hash_system)

    assert plan.groups == [] and plan.scanned == 0  # one candidate left: nothing to compare


def test_a_group_fails_whole_and_leaves_the_old_state(
    hash_system: CognitiveSystem, duplicates: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = consolidation.plan_consolidation(hash_system)

    def broken(*args: object) -> list[str]:
        raise RuntimeError("killed mid-group")

    monkeypatch.setattr(consolidation_sql, "move_to_trash", broken)
    with pytest.raises(RuntimeError):
        consolidation.apply_plan(hash_system, plan, None)

    (kept,) = hash_system.records.memories.get([duplicates["loud"]])
    assert (kept.tags, kept.access_count) == (("limits",), 2)
    assert hash_system.records.history.of([duplicates["loud"]]) == {}
    assert len(hash_system.records.memories.get(list(duplicates.values()))) == len(duplicates)
    assert hash_system.records.trash.entries(10)[1] == 0


def test_the_index_search_finds_the_same_groups_as_the_exact_one(
    hash_system: CognitiveSystem, duplicates: dict[str, str]
) -> None:
    exact = consolidation.plan_consolidation(hash_system)
    indexed = consolidation.plan_consolidation(hash_system, exact_limit=0)

    def shape(plan: consolidation.ConsolidationPlan) -> list[tuple[str, set[str]]]:
        return [(g.survivor.id, {m.id for m in g.members}) for g in plan.groups]

    assert shape(indexed) == shape(exact) and len(exact.groups) == 1


def test_a_stricter_threshold_and_a_project_narrow_the_groups(
    hash_system: CognitiveSystem, duplicates: dict[str, str]
) -> None:
    strict = consolidation.plan_consolidation(hash_system, threshold=0.99)
    billing = consolidation.plan_consolidation(hash_system, project="billing")

    (group,) = strict.groups
    assert {m.id for m in group.members} == {duplicates["first"], duplicates["loud"]}
    assert billing.groups == [] and billing.scanned == 0
