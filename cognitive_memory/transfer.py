"""Export a store as JSON Lines and import such a file (or an official ``memory.jsonl``) back.

An import reads and checks the whole file first (a bad line refuses it all, naming the line), then
decides per memory by id: the same memory is left alone, a changed one is updated (its stored
state kept as a version), a new one is inserted with its id, dates and counts. Everything is then
written in one SQLite transaction, links last, so a crash leaves the store as it was or as
imported, never half of it; vectors follow through the outbox, as for every store. A dry run makes
the same transaction and rolls it back, so its counts are the real ones.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
from pydantic import ValidationError

from cognitive_memory import official_memory as official
from cognitive_memory.core.memory import CognitiveMemory, Vector, content_key
from cognitive_memory.core.records import EDITABLE_FIELDS
from cognitive_memory.errors import InvalidInputError
from cognitive_memory.storage.browse import VersionRow
from cognitive_memory.storage.relations import LinkWrite
from cognitive_memory.storage.transfer import ImportWrite, LinkRow
from cognitive_memory.system import CognitiveSystem
from cognitive_memory.transfer_format import (
    FORMAT,
    ExportHeader,
    MemoryLine,
    decode_vector,
    memory_line,
    problem,
)

__all__ = ["ImportReport", "Skip", "export_lines", "import_lines", "read_import"]

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


@dataclass(frozen=True, slots=True)
class Record:
    line: int
    memory: CognitiveMemory
    versions: tuple[VersionRow, ...] = ()
    links: tuple[LinkRow, ...] = ()


@dataclass(frozen=True, slots=True)
class ImportFile:
    """A checked import file: its format, the model of its vectors (None: it has none), its
    records, and links beside them (the official format's relations)."""

    format: str
    model: str | None
    records: list[Record]
    links: tuple[LinkRow, ...] = ()


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


def export_lines(
    system: CognitiveSystem, project: str | None, with_vectors: bool, progress: Progress | None = None
) -> Iterator[str]:
    """The export, line by line: the header, then each memory (of ``project`` only, if given) with
    its versions and the links that start at it, read in batches (never all in memory)."""
    counts = system.memories.counts()
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
    for batch in system.memories.iter_memories():
        chosen = [m for m in batch if project is None or m.project == project][: total - done]
        ids = [m.id for m in chosen]
        versions, links = system.memories.versions(ids), system.memories.links_from(ids)
        for memory in chosen:
            line = memory_line(
                memory, versions.get(memory.id, []), links.get(memory.id, []), with_vector=with_vectors
            )
            yield json.dumps(line, ensure_ascii=False)
        done += len(chosen)
        if progress is not None:
            progress(done, total)
    if done != total:
        raise InvalidInputError(
            f"{total - done} memories were forgotten while exporting: the file is incomplete; run it again."
        )


def read_import(
    lines: Iterable[str], project: str | None, default_project: str, kind: str = "auto"
) -> ImportFile:
    """Parse and check every line (``kind``: auto, cognitive or official-memory); the first bad
    line raises InvalidInputError naming it. ``project`` moves every memory there; entities of the
    official format, which have none, go to ``default_project`` without it."""
    numbered = [(n, text) for n, text in enumerate(lines, start=1) if text.strip()]
    if not numbered:
        raise InvalidInputError("The import file is empty.")
    first = _json(*numbered[0])
    if kind == "auto":
        kind = official.FORMAT if first.get("type") in ("entity", "relation") else "cognitive"
    if kind == official.FORMAT:
        return _read_official(numbered, project or default_project)
    return _read_export(first, numbered, project)


def _json(number: int, text: str) -> dict[str, object]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise InvalidInputError(f"Line {number} is not JSON: {exc}. Nothing was imported.") from None
    if not isinstance(value, dict):
        raise InvalidInputError(f"Line {number} is not a JSON object. Nothing was imported.")
    return value


def _bad(number: int, what: str) -> InvalidInputError:
    return InvalidInputError(f"Line {number}: {what}. Nothing was imported.")


def _read_export(
    first: dict[str, object], numbered: list[tuple[int, str]], project: str | None
) -> ImportFile:
    try:
        header = ExportHeader.model_validate(first)
    except ValidationError as exc:
        raise _bad(1, f"not a {FORMAT} header ({problem(exc)})") from None
    records: list[Record] = []
    seen: set[str] = set()
    for number, text in numbered[1:]:
        try:
            line = MemoryLine.model_validate(_json(number, text))
            vector = decode_vector(line.embedding, header.dimensions) if line.embedding else None
        except ValidationError as exc:
            raise _bad(number, problem(exc)) from None
        except ValueError as exc:
            raise _bad(number, str(exc)) from None
        if line.id in seen:
            raise _bad(number, f"memory {line.id} appears twice")
        seen.add(line.id)
        memory = line.memory(vector)
        if project is not None:
            memory = dataclasses.replace(memory, project=project)
        records.append(Record(number, memory, tuple(line.version_rows()), tuple(line.link_rows())))
    if len(records) != header.count:
        raise InvalidInputError(
            f"The file holds {len(records)} memories but its header says {header.count}: it is incomplete "
            "(an export cut short?). Nothing was imported."
        )
    has_vectors = bool(records) and all(r.memory.cognitive_embedding is not None for r in records)
    return ImportFile(FORMAT, f"{header.model}:{header.dimensions}" if has_vectors else None, records)


def _read_official(numbered: list[tuple[int, str]], project: str) -> ImportFile:
    now = datetime.now(UTC)
    entities: dict[str, Record] = {}
    relations: list[tuple[int, official.RelationLine]] = []
    for number, text in numbered:
        value = _json(number, text)
        try:
            if value.get("type") == "entity":
                entity = official.EntityLine.model_validate(value)
                entities[entity.name] = Record(number, official.entity_memory(entity, project, now))
            elif value.get("type") == "relation":
                relations.append((number, official.RelationLine.model_validate(value)))
            else:
                raise _bad(
                    number, f"type is {value.get('type')!r}; an official memory.jsonl has entity or relation"
                )
        except ValidationError as exc:
            raise _bad(number, problem(exc)) from None
    links = tuple(official.relation_link(relation, now) for _, relation in relations)
    return ImportFile(official.FORMAT, None, list(entities.values()), links)


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
    written = system.memories.write_import(write, session_id, dry_run=dry_run)
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
    for start in range(0, len(records), 500):
        batch = records[start : start + 500]
        stored = {m.id: m for m in system.memories.get([r.memory.id for r in batch])}
        for record in batch:
            memory, previous = record.memory, stored.get(record.memory.id)
            key = (content_key(memory.content), memory.project)
            same = texts.get(key) or _same_text(system, memory)
            if same is not None and same != memory.id and (previous is None or _differs(previous, memory)):
                aliases.setdefault(memory.id, same)
                report.skipped.append(Skip(record.line, memory.id, f"memory {same} already holds this text"))
                continue
            if previous is None:
                added.append(memory)
            elif _differs(previous, memory):
                updated.append((_update_of(previous, memory, reuse), previous))
            else:
                report.unchanged += 1
            texts.setdefault(key, memory.id)
    report.added, report.updated = len(added), len(updated)
    return added, updated, aliases


def _same_text(system: CognitiveSystem, memory: CognitiveMemory) -> str | None:
    found = system.memories.find_same_text(memory.content, memory.project)
    return found.id if found is not None else None


def _differs(stored: CognitiveMemory, incoming: CognitiveMemory) -> bool:
    return any(getattr(stored, name) != getattr(incoming, name) for name in COMPARED_FIELDS)


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
    if system.memories.meta("encoder") is None:
        system.memories.set_meta("encoder", signature)
    for start in range(0, len(memories), 1000):
        system.replication.index(memories[start : start + 1000])
    system.build_index()
