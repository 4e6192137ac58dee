"""The sources repository: a source written in one transaction, read back, and forgotten."""

from __future__ import annotations

from cognitive_memory.storage import SQLiteMemoryStore
from cognitive_memory.storage.sources import ChunkRow, SourceWrite
from tests.integration.storage.stored import stored_memory


def _write(key: str, *ids: str) -> SourceWrite:
    return SourceWrite(
        key=key,
        loader_type="markdown",
        fingerprint=f"fingerprint of {key}",
        state={"size": len(ids)},
        added=[stored_memory(memory_id) for memory_id in ids],
        chunks=[
            ChunkRow(memory_id, f"#{memory_id}", f"hash {memory_id}", n) for n, memory_id in enumerate(ids)
        ],
    )


def test_a_written_source_is_read_back_with_its_chunks_in_order(store: SQLiteMemoryStore) -> None:
    store.sources.write([_write("/notes/a.md", "a1", "a2"), _write("/other/b.md", "b1")])

    (found,) = store.sources.under("markdown", "/notes")

    assert (found.key, found.fingerprint, dict(found.state)) == (
        "/notes/a.md",
        "fingerprint of /notes/a.md",
        {"size": 2},
    )
    assert [(c.memory_id, c.position) for c in store.sources.chunks("/notes/a.md")] == [("a1", 0), ("a2", 1)]
    assert store.sources.under("git") == []
    assert sorted(m for m, _ in store.outbox.pending()) == ["a1", "a2", "b1"]


def test_digests_are_appended_or_replaced(store: SQLiteMemoryStore) -> None:
    store.sources.save_digests("git:/repo", [("c1", "one"), ("c2", "two")])
    store.sources.save_digests("git:/repo", [("c3", "three")])
    assert store.sources.digests("git:/repo") == ["one", "two", "three"]

    store.sources.save_digests("git:/repo", [("c9", "nine")], replace=True)

    assert store.sources.digests("git:/repo") == ["nine"]


def test_forgetting_a_source_removes_its_memories_and_digests(store: SQLiteMemoryStore) -> None:
    store.sources.write([_write("/notes/a.md", "a1", "a2"), _write("/notes/b.md", "b1")])
    store.sources.save_digests("/notes/a.md", [("x", "digest")])

    removed = store.sources.forget(["/notes/a.md"])

    assert sorted(removed) == ["a1", "a2"]
    assert [source.key for source in store.sources.under("markdown")] == ["/notes/b.md"]
    assert [memory.id for memory in store.memories.get(["a1", "a2", "b1"])] == ["b1"]
    assert store.sources.digests("/notes/a.md") == []
