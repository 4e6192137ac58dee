"""Reading an import file: lines of bounded size, each checked by the rules of ``store_memory``
(transfer.format), and every problem of the file reported at once; a file with any problem is
refused whole, before anything is written.

Memory stays bounded by the file's valid content: a line is never read past ``MAX_LINE_BYTES``,
only the first ``SHOWN_PROBLEMS`` problems are kept, and a device or FIFO is not opened.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from pydantic import ValidationError

from cognitive_memory.core.memory import CognitiveMemory
from cognitive_memory.core.validation import check_project
from cognitive_memory.errors import InvalidInputError
from cognitive_memory.regular_files import NotRegularFileError, open_regular
from cognitive_memory.storage.browse import VersionRow
from cognitive_memory.storage.transfer import LinkRow
from cognitive_memory.transfer import official_memory as official
from cognitive_memory.transfer.format import FORMAT, ExportHeader, MemoryLine, decode_vector, problems

__all__ = [
    "MAX_LINE_BYTES",
    "SHOWN_PROBLEMS",
    "ImportFile",
    "Problems",
    "Record",
    "numbered_lines",
    "open_import",
    "read_import",
]

# The longest line a valid export holds, with room: a memory's text and each of its versions'
# (100,000 characters, at most 4 bytes each in UTF-8) with their metadata (64,000 bytes) come to
# under 0.5 MB, so this leaves room for some sixty versions of the longest text, or thousands of
# ordinary ones; its JSON and objects stay within a few hundred MB while it is checked.
MAX_LINE_BYTES = 32 * 1024 * 1024
SHOWN_PROBLEMS = 20
_SKIP_CHUNK = 1024 * 1024


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


class Problems:
    """What is wrong with a file: every problem counted, the first ``SHOWN_PROBLEMS`` kept."""

    def __init__(self) -> None:
        self.shown: list[str] = []
        self.count = 0

    def add(self, message: str) -> None:
        self.count += 1
        if len(self.shown) < SHOWN_PROBLEMS:
            self.shown.append(message)

    def at(self, number: int, what: str) -> None:
        self.add(f"Line {number}: {what}")

    def raise_any(self) -> None:
        """Raise InvalidInputError listing the problems, if there are any."""
        if self.count == 1:
            raise InvalidInputError(f"{self.shown[0].rstrip('.')}. Nothing was imported.")
        if self.count:
            listed = [f"  {message}" for message in self.shown]
            if self.count > len(self.shown):
                listed.append(f"  ... and {self.count - len(self.shown)} more.")
            head = f"{self.count} problems in the file; nothing was imported. Fix them and import it again:"
            raise InvalidInputError("\n".join([head, *listed]))


def open_import(path: Path) -> BinaryIO:
    """``path`` opened for reading; anything but a regular file is refused (``open_regular``)."""
    try:
        return open_regular(path)
    except FileNotFoundError:
        raise InvalidInputError(f"{path} does not exist.", code="not_found") from None
    except NotRegularFileError as exc:
        if exc.replaced:
            raise InvalidInputError(f"{path} was replaced while it was opened: import it again.") from None
        raise InvalidInputError(
            f"{path} is not a regular file: give an export file (or '-' for stdin)."
        ) from None
    except OSError as exc:
        raise InvalidInputError(f"Cannot read {path}: {exc.strerror or exc}") from None


def _regular(stream: BinaryIO) -> bool:
    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is an OSError
        return False


def numbered_lines(stream: BinaryIO, found: Problems) -> Iterator[tuple[int, str]]:
    """Each non-blank line of ``stream`` with its number. A line longer than ``MAX_LINE_BYTES`` or
    not UTF-8 is a problem; the long one is never held whole: the rest of a regular file goes on
    after it, any other stream (a pipe, /dev/zero) stops there."""
    regular = _regular(stream)
    number = 0
    while raw := stream.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(raw.rstrip(b"\r\n")) > MAX_LINE_BYTES:
            stop = "" if regular else "; reading stopped there"
            found.add(
                f"Line {number} is longer than {MAX_LINE_BYTES:,} bytes, more than any valid line{stop}"
            )
            if not regular:
                return
            while raw and not raw.endswith(b"\n"):
                raw = stream.readline(_SKIP_CHUNK)
            continue
        try:
            text = raw.decode("utf-8").removeprefix("\ufeff" if number == 1 else "")
        except UnicodeDecodeError as exc:
            found.at(number, f"not UTF-8 (byte {exc.start + 1})")
            continue
        if text.strip():
            yield number, text


def read_import(
    stream: BinaryIO, project: str | None, default_project: str, kind: str = "auto"
) -> ImportFile:
    """Read and check every line (``kind``: auto, cognitive or official-memory); any problem
    raises InvalidInputError listing them all, with their line numbers. ``project`` moves every
    memory there; entities of the official format, which have none, go to ``default_project``
    without it."""
    found = Problems()
    lines = _objects(numbered_lines(stream, found), found)
    first = next(lines, None)
    if first is None:
        found.raise_any()
        raise InvalidInputError("The import file is empty.")
    if kind == "auto":
        kind = official.FORMAT if first[1].get("type") in ("entity", "relation") else "cognitive"
    if kind == official.FORMAT:
        source = _read_official(first, lines, project or default_project, found)
    else:
        source = _read_export(first, lines, project, found)
    found.raise_any()
    return source


Numbered = tuple[int, dict[str, object]]


def _objects(lines: Iterator[tuple[int, str]], found: Problems) -> Iterator[Numbered]:
    """The JSON object of each line (a line that is not one is a problem)."""
    for number, text in lines:
        try:
            value = json.loads(text)
        except ValueError as exc:
            if text.endswith("\n"):
                found.add(f"Line {number} is not JSON: {exc}")
            else:  # only the last line can end without one: the file stops inside it
                found.add(
                    f"Line {number} is cut short: the file ends inside it (an export that did not "
                    f"finish, or a copy cut off; {exc})"
                )
            continue
        if isinstance(value, dict):
            yield number, value
        else:
            found.add(f"Line {number} is not a JSON object")


def _read_export(
    first: Numbered, lines: Iterator[Numbered], project: str | None, found: Problems
) -> ImportFile:
    header: ExportHeader | None = None
    try:
        header = ExportHeader.model_validate(first[1])
    except ValidationError as exc:
        found.at(first[0], f"not a {FORMAT} header ({problems(exc)})")
    records: list[Record] = []
    seen: set[str] = set()
    total = 0
    for number, value in lines:
        total += 1
        record = _record(number, value, header, found)
        if record is None:
            continue
        if record.memory.id in seen:
            found.at(number, f"memory {record.memory.id} appears twice")
            continue
        seen.add(record.memory.id)
        if found.count:
            continue  # the file is refused: its records need not be kept
        if project is not None:
            record = dataclasses.replace(record, memory=dataclasses.replace(record.memory, project=project))
        records.append(record)
    if header is not None and total != header.count and not found.count:
        found.add(
            f"The file holds {total} memories but its header says {header.count}: it is incomplete "
            "(an export cut short?)"
            if total < header.count
            else f"The file holds {total} memories but its header says {header.count}: lines were "
            "added after the export (export again, or make the header's count match)"
        )
    has_vectors = bool(records) and all(r.memory.cognitive_embedding is not None for r in records)
    model = f"{header.model}:{header.dimensions}" if header is not None and has_vectors else None
    return ImportFile(FORMAT, model, records)


def _record(
    number: int, value: dict[str, object], header: ExportHeader | None, found: Problems
) -> Record | None:
    """The record of one memory line, or None when it has a problem (added to ``found``)."""
    try:
        line = MemoryLine.model_validate(value)
    except ValidationError as exc:
        found.at(number, problems(exc))
        return None
    vector = None
    if line.embedding is not None and header is not None:
        try:
            vector = decode_vector(line.embedding, header.dimensions)
        except ValueError as exc:
            found.at(number, str(exc))
            return None
    versions = [v.version for v in line.versions]
    if len(set(versions)) != len(versions):
        found.at(number, "two of its versions have the same number")
        return None
    return Record(number, line.memory(vector), tuple(line.version_rows()), tuple(line.link_rows()))


def _read_official(first: Numbered, lines: Iterator[Numbered], project: str, found: Problems) -> ImportFile:
    now = datetime.now(UTC)
    try:
        project = check_project(project)
    except InvalidInputError as exc:
        found.add(exc.message)
    entities: dict[str, Record] = {}
    links: list[LinkRow] = []
    for number, value in itertools.chain((first,), lines):
        try:
            if value.get("type") == "entity":
                entity = official.EntityLine.model_validate(value)
                entities[entity.name] = Record(number, official.entity_memory(entity, project, now))
            elif value.get("type") == "relation":
                links.append(official.relation_link(official.RelationLine.model_validate(value), now))
            else:
                found.at(
                    number, f"type is {value.get('type')!r}; an official memory.jsonl has entity or relation"
                )
        except ValidationError as exc:
            found.at(number, problems(exc))
        except InvalidInputError as exc:
            found.at(number, exc.message)
    return ImportFile(official.FORMAT, None, list(entities.values()), tuple(links))
