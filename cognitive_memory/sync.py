"""Loaded sources kept in step with their files: ``LoadedSources`` applies a sync that
``plan_sync`` plans (which chunks keep their memory, which change, which come and go).

Matching runs in two passes. A chunk whose key is already stored keeps that memory (its id,
access count and strength): unchanged when the text hash is equal, updated (embedded again) when
not. A chunk with a new key whose text equals a stored chunk that lost its key (a section that
moved or was renamed without a change of text) takes over that memory without re-embedding.
A chunk still unmatched takes the unmatched stored chunk at the same position (a renamed header:
updated in place). What is left is added or removed.

The plan is embedded in one batch and written in one SQLite transaction, then indexed.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from cognitive_memory.core.memory import CognitiveMemory, SourceKind, Vector
from cognitive_memory.core.sources import SourceChunk, SourceUpdate, SyncCounts, content_hash
from cognitive_memory.core.store import StoreOfRecord
from cognitive_memory.core.store.values import ChunkRow, SourceRecord, SourceWrite
from cognitive_memory.core.validation import check_text
from cognitive_memory.encoding.base import Encoder
from cognitive_memory.errors import InvalidInputError
from cognitive_memory.replicas.index_replication import IndexReplication

__all__ = ["LoadedSources", "SyncPlan", "build_write", "plan_sync"]

PARENT_WEIGHT = 0.8
SIBLING_WEIGHT = 0.5


@dataclass(frozen=True, slots=True)
class _Match:
    chunk: SourceChunk
    digest: str
    stored: CognitiveMemory | None
    needs_vector: bool


@dataclass(frozen=True, slots=True)
class SyncPlan:
    """A source's chunks matched against what the store holds; ``texts`` need embedding."""

    update: SourceUpdate
    matches: tuple[_Match, ...]
    removed: tuple[str, ...]

    @property
    def texts(self) -> list[str]:
        return [match.chunk.content for match in self.matches if match.needs_vector]


def plan_sync(
    update: SourceUpdate, stored_chunks: Sequence[ChunkRow], stored: Mapping[str, CognitiveMemory]
) -> SyncPlan:
    """Match ``update``'s chunks against the source's stored chunks (see the module docstring)."""
    by_key = {row.chunk_key: row for row in stored_chunks}
    new_keys = {chunk.key for chunk in update.chunks}
    if len(new_keys) != len(update.chunks):
        raise InvalidInputError(
            f"Source {update.key} has two chunks with the same key.", code="invalid_value"
        )
    orphans: dict[str, list[ChunkRow]] = {}
    for stored_row in stored_chunks:
        if stored_row.chunk_key not in new_keys:
            orphans.setdefault(stored_row.content_hash, []).append(stored_row)
    rows: list[ChunkRow | None] = []
    digests = [content_hash(check_text(chunk.content)) for chunk in update.chunks]
    for chunk, digest in zip(update.chunks, digests, strict=True):
        row = by_key.get(chunk.key)
        if row is None and orphans.get(digest):
            row = orphans[digest].pop(0)
        rows.append(row)
    # Last, a chunk still unmatched takes the unmatched stored chunk at its position (a renamed
    # header): it is updated in place rather than replaced.
    left = {r.position: r for group in orphans.values() for r in group}
    rows = [row or left.get(position) for position, row in enumerate(rows)]
    matches = []
    for chunk, digest, row in zip(update.chunks, digests, rows, strict=True):
        memory = stored.get(row.memory_id) if row is not None else None
        changed = row is None or row.content_hash != digest or memory is None
        matches.append(_Match(chunk, digest, memory, needs_vector=changed))
    kept = {match.stored.id for match in matches if match.stored is not None}
    removed = tuple(r.memory_id for r in stored_chunks if r.memory_id not in kept)
    return SyncPlan(update, tuple(matches), removed)


def build_write(plan: SyncPlan, vectors: Iterator[Vector], now: datetime) -> tuple[SourceWrite, SyncCounts]:
    """The SourceWrite for a plan, taking the new vectors (in ``plan.texts`` order) from ``vectors``."""
    added: list[CognitiveMemory] = []
    rewritten: list[CognitiveMemory] = []
    chunks: list[ChunkRow] = []
    unchanged = 0
    for position, match in enumerate(plan.matches):
        vector = next(vectors) if match.needs_vector else None
        memory = _memory_for(match, vector, now, plan.update)
        if match.stored is None:
            added.append(memory)
        elif memory != match.stored or vector is not None:
            rewritten.append(memory)
        else:
            unchanged += 1
        chunks.append(ChunkRow(memory.id, match.chunk.key, match.digest, position))
    ids = {match.chunk.key: row.memory_id for match, row in zip(plan.matches, chunks, strict=True)}
    update = plan.update
    write = SourceWrite(
        key=update.key,
        loader_type=update.loader_type,
        fingerprint=update.fingerprint,
        state=update.state,
        added=added,
        rewritten=rewritten,
        removed=plan.removed,
        chunks=chunks,
        edges=_structure(update.chunks, ids),
        links=[(ids[c.key], target) for c in update.chunks for target in c.links if target != update.key],
    )
    return write, SyncCounts(len(added), len(rewritten), len(plan.removed), unchanged)


def _memory_for(match: _Match, vector: Vector | None, now: datetime, update: SourceUpdate) -> CognitiveMemory:
    chunk, stored = match.chunk, match.stored
    if stored is None:
        stored = CognitiveMemory(
            id=str(uuid.uuid4()),
            content=chunk.content,
            hierarchy_level=chunk.hierarchy_level,
            memory_type=chunk.memory_type,
            created_date=now,
            timestamp=now,
        )
    fresh = dataclasses.replace(
        stored,
        content=chunk.content,
        hierarchy_level=chunk.hierarchy_level,
        memory_type=chunk.memory_type,
        importance_score=chunk.importance_score,
        metadata=dict(chunk.metadata),
        tags=chunk.tags,
        source_date=chunk.source_date,
        project=update.project,
        source=SourceKind(update.loader_type),
        origin=chunk.origin,
    )
    if match.stored is None:
        return dataclasses.replace(fresh, cognitive_embedding=vector)
    if vector is not None:
        return dataclasses.replace(fresh, modified_date=now, cognitive_embedding=vector)
    return stored if fresh == stored else dataclasses.replace(fresh, modified_date=now)


def _structure(chunks: Sequence[SourceChunk], ids: Mapping[str, str]) -> list[tuple[str, str, str, float]]:
    """Directed parent/child edges, and sibling edges between consecutive children of one parent."""
    edges: list[tuple[str, str, str, float]] = []
    last_child: dict[str, str] = {}
    for chunk in chunks:
        if chunk.parent is None or chunk.parent not in ids:
            continue
        child, parent = ids[chunk.key], ids[chunk.parent]
        edges += [(child, parent, "parent", PARENT_WEIGHT), (parent, child, "child", PARENT_WEIGHT)]
        previous = last_child.get(parent)
        if previous is not None:
            edges += [
                (previous, child, "sibling", SIBLING_WEIGHT),
                (child, previous, "sibling", SIBLING_WEIGHT),
            ]
        last_child[parent] = child
    return edges


class LoadedSources:
    """The sources loaders keep in the store (markdown files, git histories): what they read of
    them, and the syncs they apply. Built by ``CognitiveSystem`` over its store and index;
    ``recorded`` is called after each write (the store records its encoder with the first)."""

    def __init__(
        self,
        records: StoreOfRecord,
        encoder: Encoder,
        replication: IndexReplication,
        clock: Callable[[], datetime],
        recorded: Callable[[], None],
    ) -> None:
        self.records = records
        self.encoder = encoder
        self._replication = replication
        self._clock = clock
        self._recorded = recorded

    def sources(self, loader_type: str, prefix: str = "") -> list[SourceRecord]:
        """Loaded sources of ``loader_type`` whose key starts with ``prefix``."""
        return self.records.sources.under(loader_type, prefix)

    def source_chunks(self, key: str) -> list[ChunkRow]:
        """The chunks a source holds, in order."""
        return self.records.sources.chunks(key)

    def source_digests(self, key: str) -> list[str]:
        """The per-item digests a loader keeps for a source, oldest first."""
        return self.records.sources.digests(key)

    def save_source_digests(
        self, key: str, items: Sequence[tuple[str, str]], *, replace: bool = False
    ) -> None:
        """Append ``(item_key, data)`` digests to a source's, or replace them all."""
        self.records.sources.save_digests(key, items, replace=replace)

    def sync_sources(self, updates: Sequence[SourceUpdate]) -> list[SyncCounts]:
        """Make the store hold exactly the given chunks of each source (see the module docstring).

        Only new and changed texts are embedded, in one batch; all sources are written in one
        SQLite transaction, so no reader ever sees a source half-replaced.
        """
        plans = []
        for update in updates:
            rows = self.records.sources.chunks(update.key)
            stored = {m.id: m for m in self.records.memories.get([row.memory_id for row in rows])}
            plans.append(plan_sync(update, rows, stored))
        texts = [text for plan in plans for text in plan.texts]
        vectors = iter(self.encoder.encode(texts)) if texts else iter(())
        now = self._clock()
        built = [build_write(plan, vectors, now) for plan in plans]
        writes = [write for write, _ in built]
        self.records.sources.write(writes)
        self._recorded()
        upserts = [m for write in writes for m in (*write.added, *write.rewritten)]
        if upserts:
            self._replication.index(upserts)
        removed = [memory_id for write in writes for memory_id in write.removed]
        if removed:
            self._replication.unindex(removed)
        return [counts for _, counts in built]

    def forget_sources(self, keys: Sequence[str]) -> int:
        """Remove loaded sources and their memories; returns how many memories went."""
        removed = self.records.sources.forget(keys)
        if removed:
            self._replication.unindex(removed)
        return len(removed)

    def build_index(self) -> bool:
        """After a bulk load: build the approximate vector index if enough vectors lack it."""
        return self._replication.build_index()
