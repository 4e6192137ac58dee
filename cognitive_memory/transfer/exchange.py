"""Export a store as JSON Lines and import such a file (or an official ``memory.jsonl``) back.

An import reads and checks the whole file first (transfer.reading: any bad line refuses it all, every
problem listed with its line), then decides per memory by id: the same memory is left alone, a
changed one is updated (its stored state kept as a version), a new one is inserted with its id,
dates and counts; a memory loaded from a file or repository is left to its source. Everything is then
written in one SQLite transaction, links last, so a crash leaves the store as it was or as
imported, never half of it; vectors follow through the outbox, as for every store. A dry run makes
the same transaction and rolls it back, so its counts are the real ones.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np

from cognitive_memory.core.memory import CognitiveMemory, Vector, content_key
from cognitive_memory.core.records import EDITABLE_FIELDS
from cognitive_memory.errors import InvalidInputError
from cognitive_memory.storage.relations import LinkWrite
from cognitive_memory.storage.transfer import ImportWrite, LinkRow
from cognitive_memory.system import CognitiveSystem
from cognitive_memory.transfer.format import FORMAT, memory_line
from cognitive_memory.transfer.reading import MAX_LINE_BYTES, ImportFile, Record, open_import, read_import

__all__ = ["ImportFile", "ImportReport", "Skip", "export_lines", "import_lines", "open_import", "read_import"]

# Fields whose difference makes an imported memory an update (access counts, strength and dates of
# use are the store's own history and never make one).
COMPARED_FIELDS = (*EDITABLE_FIELDS, "project", "source_date")
ENCODE_BATCH = 256
Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class Skip:
    """Something an import left out, and why (``line`` 0: not tied to one line)."""

    line: int
    id: str
    reason: str


@dataclass(slots=True)
class ImportReport:
    format: str
    dry_run: bool
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    links_added: int = 0
    links_unchanged: int = 0
    embedded: int = 0
    skipped: list[Skip] = field(default_factory=list)
    unkeyed: list[Skip] = field(default_factory=list)


def export_lines(
    system: CognitiveSystem, project: str | None, with_vectors: bool, progress: Progress | None = None
) -> Iterator[str]:
    """The export, line by line: the header, then each memory (of ``project`` only, if given) with
    its versions and the links that start at it, read in batches (never all in memory)."""
    counts = system.records.memories.counts()
    total = counts.by_project.get(project, 0) if project else counts.total
    header = {
        "format": FORMAT,
        "version": 1,
        "model": system.encoder.name,
        "dimensions": system.encoder.dimension,
        "exported_at": datetime.now(UTC).isoformat(),
        "count": total,
        "project": project,
    }
    yield json.dumps(header, ensure_ascii=False)
    done = 0
    for batch in system.records.memories.batches():
        chosen = [m for m in batch if project is None or m.project == project][: total - done]
        ids = [m.id for m in chosen]
        versions, links = system.records.history.of(ids), system.records.links.outgoing(ids)
        for memory in chosen:
            line = memory_line(
                memory, versions.get(memory.id, []), links.get(memory.id, []), with_vector=with_vectors
            )
            yield _importable(json.dumps(line, ensure_ascii=False), memory.id)
        done += len(chosen)
        if progress is not None:
            progress(done, total)
    if done != total:
        raise InvalidInputError(
            f"{total - done} memories were forgotten while exporting: the file is incomplete; run it again."
        )


def _importable(line: str, memory_id: str) -> str:
    """``line``, unless it is longer than an import reads: a file that cannot be imported back is
    refused while it is written, not when it is needed."""
    size = len(line.encode("utf-8"))
    if size > MAX_LINE_BYTES:
        raise InvalidInputError(
            f"Memory {memory_id} with its versions and links takes {size:,} bytes, more than an import "
            f"reads in one line ({MAX_LINE_BYTES:,}): the export stopped there. Export the other projects "
            "with --project; `memory_system backup` keeps everything."
        )
    return line


def import_lines(
    system: CognitiveSystem,
    source: ImportFile,
    *,
    dry_run: bool = False,
    session_id: str | None = None,
    progress: Progress | None = None,
) -> ImportReport:
    """Import a checked file into ``system`` (see the module docstring) and report the counts;
    ``progress`` follows the embedding, the long part."""
    report = ImportReport(source.format, dry_run)
    signature = f"{system.encoder.name}:{system.encoder.dimension}"
    reuse = source.model == signature
    added, updated, aliases = _plan(system, source.records, report, reuse)
    to_encode = [m for m in added if not reuse or m.cognitive_embedding is None]
    to_encode += [m for m, _ in updated if m.cognitive_embedding is None]
    vectors = _encode(system, [m.content for m in to_encode], dry_run, progress)
    report.embedded = len(to_encode)
    encoded = {m.id: vector for m, vector in zip(to_encode, vectors, strict=True)}
    added = [_with_vector(m, encoded) for m in added]
    updated = [(_with_vector(m, encoded), previous) for m, previous in updated]
    new_ids = {m.id for m in added}
    versions = [v for r in source.records if r.memory.id in new_ids for v in r.versions]
    links = [_aliased(link, aliases) for r in source.records for link in r.links]
    links += [_aliased(link, aliases) for link in source.links]
    # Two linked memories whose texts both were already stored as one: the link would be a loop.
    report.skipped += [
        _link_skip(link, "it would link a memory to itself") for link in links if link.from_id == link.to_id
    ]
    links = [link for link in links if link.from_id != link.to_id]
    write = ImportWrite(added, versions, updated, links)
    written = system.records.memories.write_import(write, session_id, dry_run=dry_run)
    _count_links(report, links, written)
    if not dry_run and (added or updated):
        _index(system, [*added, *(m for m, _ in updated)], signature)
    return report


def _count_links(report: ImportReport, links: Sequence[LinkRow], written: Sequence[LinkWrite]) -> None:
    for link, outcome in zip(links, written, strict=True):
        if outcome.created:
            report.links_added += 1
        elif outcome.missing:
            report.skipped.append(_link_skip(link, f"no memory {', '.join(outcome.missing)}"))
        elif outcome.cycle:
            report.skipped.append(_link_skip(link, "it would close a supersedes cycle"))
        else:
            report.links_unchanged += 1


def _link_skip(link: LinkRow, why: str) -> Skip:
    note = f" ({link.note})" if link.note else ""
    return Skip(0, link.from_id, f"link {link.from_id} -{link.relation}-> {link.to_id}{note}: {why}")


def _plan(
    system: CognitiveSystem, records: Sequence[Record], report: ImportReport, reuse: bool
) -> tuple[list[CognitiveMemory], list[tuple[CognitiveMemory, CognitiveMemory]], dict[str, str]]:
    """Sort records into new and changed memories (counting the unchanged and the skipped); the
    aliases map the id of a memory skipped for its text to the memory already holding it."""
    added: list[CognitiveMemory] = []
    updated: list[tuple[CognitiveMemory, CognitiveMemory]] = []
    aliases: dict[str, str] = {}
    texts: dict[tuple[str, str], str] = {}
    claimed: dict[tuple[str, str], str] = {}
    for start in range(0, len(records), 500):
        batch = records[start : start + 500]
        stored = {m.id: m for m in system.records.memories.get([r.memory.id for r in batch])}
        for record in batch:
            memory, previous = record.memory, stored.get(record.memory.id)
            if previous is not None and previous.source.is_loaded and _differs(previous, memory):
                report.skipped.append(Skip(record.line, memory.id, _loaded(previous)))
                continue
            key = (content_key(memory.content), memory.project)
            same = texts.get(key) or _same_text(system, memory)
            if same is not None and same != memory.id and (previous is None or _differs(previous, memory)):
                aliases.setdefault(memory.id, same)
                report.skipped.append(Skip(record.line, memory.id, f"memory {same} already holds this text"))
                continue
            memory = _keyed(system, record, previous, claimed, report)
            if previous is None:
                added.append(memory)
            elif _differs(previous, memory):
                updated.append((_update_of(previous, memory, reuse), previous))
            else:
                report.unchanged += 1
            texts.setdefault(key, memory.id)
    report.added, report.updated = len(added), len(updated)
    return added, updated, aliases


def _keyed(
    system: CognitiveSystem,
    record: Record,
    previous: CognitiveMemory | None,
    claimed: dict[tuple[str, str], str],
    report: ImportReport,
) -> CognitiveMemory:
    """The record's memory with the key it can hold: the file's, else the one it has; a key another
    memory of the project holds (in the store, or earlier in the file) is left out, and reported."""
    memory = record.memory
    wanted = [k for k in (memory.key, previous.key if previous else None) if k is not None]
    for key in dict.fromkeys(wanted):
        holder = claimed.get((memory.project, key)) or next(
            (m.id for m in system.records.memories.keyed([key], [memory.project])), None
        )
        if holder is None or holder == memory.id:
            claimed[(memory.project, key)] = memory.id
            return dataclasses.replace(memory, key=key)
        if key == memory.key:
            reason = f"imported without its key {key!r}: memory {holder} holds it"
            report.unkeyed.append(Skip(record.line, memory.id, reason))
    return dataclasses.replace(memory, key=None)


def _loaded(memory: CognitiveMemory) -> str:
    """Why an import leaves a memory loaded from a file or a repository as it is."""
    source = memory.origin or memory.metadata.get("repository_path") or "its source"
    return (
        f"memory {memory.id} was loaded from {source}: an import does not change it (its source "
        "does: edit it and load it again)"
    )


def _same_text(system: CognitiveSystem, memory: CognitiveMemory) -> str | None:
    found = system.records.memories.find_same_text(memory.content, memory.project)
    return found.id if found is not None else None


def _differs(stored: CognitiveMemory, incoming: CognitiveMemory) -> bool:
    return stored.key != incoming.key or any(
        getattr(stored, name) != getattr(incoming, name) for name in COMPARED_FIELDS
    )


def _update_of(previous: CognitiveMemory, incoming: CognitiveMemory, reuse: bool) -> CognitiveMemory:
    """The stored memory with the imported fields: its vector kept when its text is the same, else
    the file's when ``reuse`` (same model), else none yet (it is embedded again)."""
    changes = {name: getattr(incoming, name) for name in COMPARED_FIELDS}
    vector = previous.cognitive_embedding if incoming.content == previous.content else None
    if vector is None and reuse:
        vector = incoming.cognitive_embedding
    return dataclasses.replace(
        previous,
        **changes,
        key=incoming.key,
        modified_date=incoming.modified_date or datetime.now(UTC),
        cognitive_embedding=vector,
    )


def _encode(
    system: CognitiveSystem, texts: list[str], dry_run: bool, progress: Progress | None
) -> list[Vector]:
    """Vectors for ``texts`` in batches (zeros in a dry run: it writes nothing, so it need not embed)."""
    if dry_run:
        return [np.zeros(system.encoder.dimension, dtype=np.float32) for _ in texts]
    vectors: list[Vector] = []
    for start in range(0, len(texts), ENCODE_BATCH):
        vectors.extend(system.encoder.encode(texts[start : start + ENCODE_BATCH]))
        if progress is not None:
            progress(len(vectors), len(texts))
    return vectors


def _with_vector(memory: CognitiveMemory, encoded: dict[str, Vector]) -> CognitiveMemory:
    vector = encoded.get(memory.id)
    return memory if vector is None else dataclasses.replace(memory, cognitive_embedding=vector)


def _aliased(link: LinkRow, aliases: dict[str, str]) -> LinkRow:
    return dataclasses.replace(
        link, from_id=aliases.get(link.from_id, link.from_id), to_id=aliases.get(link.to_id, link.to_id)
    )


def _index(system: CognitiveSystem, memories: list[CognitiveMemory], signature: str) -> None:
    """Record the encoder of a store that was empty, then index the vectors (a failure stays queued
    in the outbox and is replayed, as for every store)."""
    if system.records.properties.get("encoder") is None:
        system.records.properties.set("encoder", signature)
    for start in range(0, len(memories), 1000):
        system.replication.index(memories[start : start + 1000])
    system.build_index()
