"""Planning a source sync: chunks keep, change, move, appear and vanish."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from cognitive_memory.core.memory import CognitiveMemory, HierarchyLevel, MemoryType, SourceKind
from cognitive_memory.core.sources import SourceChunk, SourceUpdate, content_hash
from cognitive_memory.errors import InvalidInputError
from cognitive_memory.storage.sources import ChunkRow
from cognitive_memory.sync import build_write, plan_sync

NOW = datetime(2026, 1, 1, tzinfo=UTC)
LATER = datetime(2026, 2, 1, tzinfo=UTC)


def _chunk(key: str, text: str, parent: str | None = None) -> SourceChunk:
    return SourceChunk(key, text, HierarchyLevel.CONTEXT, MemoryType.SEMANTIC, parent=parent)


def _stored(memory_id: str, text: str, accesses: int = 0) -> CognitiveMemory:
    return CognitiveMemory(
        id=memory_id,
        content=text,
        hierarchy_level=HierarchyLevel.CONTEXT,
        memory_type=MemoryType.SEMANTIC,
        created_date=NOW,
        timestamp=NOW,
        access_count=accesses,
        cognitive_embedding=np.zeros(4, dtype=np.float32),
        source=SourceKind.MARKDOWN,
    )


def _vectors(n: int) -> list[np.ndarray]:
    return [np.full(4, i, dtype=np.float32) for i in range(n)]


def _plan(chunks: list[SourceChunk], stored: dict[str, tuple[str, str]]) -> tuple:
    rows = [ChunkRow(mid, key, content_hash(text), i) for i, (key, (mid, text)) in enumerate(stored.items())]
    memories = {mid: _stored(mid, text, accesses=3) for mid, text in stored.values()}
    plan = plan_sync(SourceUpdate("src", "markdown", "fp", tuple(chunks)), rows, memories)
    write, counts = build_write(plan, iter(_vectors(len(plan.texts))), LATER)
    return plan, write, counts


def test_a_first_sync_embeds_and_adds_every_chunk() -> None:
    plan, write, counts = _plan([_chunk("a", "alpha"), _chunk("b", "beta", parent="a")], {})
    assert plan.texts == ["alpha", "beta"]
    assert (counts.added, counts.updated, counts.removed, counts.unchanged) == (2, 0, 0, 0)
    a, b = (m.id for m in write.added)
    assert set(write.edges) == {(b, a, "parent", 0.8), (a, b, "child", 0.8)}


def test_an_unchanged_source_embeds_nothing_and_writes_no_memory() -> None:
    plan, write, counts = _plan([_chunk("a", "alpha")], {"a": ("m1", "alpha")})
    assert plan.texts == []
    assert not write.added and not write.rewritten and not write.removed
    assert counts.unchanged == 1 and not counts.changed


def test_a_changed_chunk_is_updated_in_place_and_keeps_its_history() -> None:
    _, write, counts = _plan([_chunk("a", "alpha two")], {"a": ("m1", "alpha")})
    assert counts.updated == 1
    (memory,) = write.rewritten
    assert (memory.id, memory.content, memory.access_count, memory.modified_date) == (
        "m1",
        "alpha two",
        3,
        LATER,
    )


def test_a_moved_chunk_with_the_same_text_keeps_its_memory_without_embedding() -> None:
    plan, write, counts = _plan([_chunk("new-key", "alpha")], {"old-key": ("m1", "alpha")})
    assert plan.texts == [] and counts.unchanged == 1 and not write.removed
    assert [row.chunk_key for row in write.chunks] == ["new-key"]
    assert write.chunks[0].memory_id == "m1"


def test_vanished_chunks_are_removed_and_new_ones_added() -> None:
    _, write, counts = _plan([_chunk("a", "alpha")], {"a": ("m1", "alpha"), "b": ("m2", "beta")})
    assert (counts.added, counts.removed, write.removed) == (0, 1, ("m2",))
    _, write, counts = _plan([_chunk("a", "alpha"), _chunk("c", "gamma")], {"a": ("m1", "alpha")})
    assert (counts.added, counts.removed, [m.content for m in write.added]) == (1, 0, ["gamma"])


def test_a_renamed_header_updates_the_memory_at_its_position() -> None:
    _, write, counts = _plan(
        [_chunk("a", "alpha"), _chunk("b2", "## B renamed\nbody")],
        {"a": ("m1", "alpha"), "b": ("m2", "## B\nbody")},
    )
    assert (counts.updated, counts.added, counts.removed) == (1, 0, 0)
    assert [(m.id, m.access_count) for m in write.rewritten] == [("m2", 3)]


def test_siblings_are_consecutive_children_of_one_parent() -> None:
    chunks = [_chunk("p", "parent"), _chunk("x", "x", "p"), _chunk("y", "y", "p"), _chunk("z", "z", "p")]
    _, write, _ = _plan(chunks, {})
    ids = {m.content: m.id for m in write.added}
    siblings = {(a, b) for a, b, kind, _ in write.edges if kind == "sibling"}
    assert siblings == {
        (ids["x"], ids["y"]),
        (ids["y"], ids["x"]),
        (ids["y"], ids["z"]),
        (ids["z"], ids["y"]),
    }


def test_two_chunks_with_one_key_are_refused() -> None:
    with pytest.raises(InvalidInputError):
        _plan([_chunk("a", "one"), _chunk("a", "two")], {})
