"""Hostile import files through typer's runner: ids the vector store cannot take, texts, tags,
projects and dates the store itself refuses, every problem of a file listed in one pass, lines and
files too big to read, and memories loaded from a file that an import must not overwrite."""

from __future__ import annotations

import io
import json
import os
import tracemalloc
import uuid
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cognitive_memory.core.memory import SourceKind
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.errors import InvalidInputError
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from cognitive_memory.transfer import reading
from cognitive_memory.transfer.exchange import read_import
from memory_system.cli import app

runner = CliRunner()
NOW = "2025-03-01T10:00:00+00:00"


@pytest.fixture(autouse=True)
def hash_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Commands build their system with the hash encoder, in a fresh data directory."""
    monkeypatch.setattr("cognitive_memory.main.model_encoder", lambda settings: HashEncoder())
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(tmp_path / "data"))


def header(count: int) -> dict[str, Any]:
    return {
        "format": "cognitive-memory-export",
        "version": 1,
        "model": "hash-384",
        "dimensions": 384,
        "exported_at": NOW,
        "count": count,
    }


def memory(**fields: Any) -> dict[str, Any]:
    line = {
        "id": str(uuid.uuid4()),
        "content": "A plain note about deploys.",
        "hierarchy_level": 2,
        "memory_type": "episodic",
        "created_date": NOW,
        "timestamp": NOW,
        "project": "default",
    }
    return line | fields


def export_file(tmp_path: Path, lines: list[dict[str, Any]], name: str = "export.jsonl") -> Path:
    path = tmp_path / name
    rows = [header(len(lines)), *lines]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def stored_count(tmp_path: Path) -> int:
    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        return system.records.memories.counts().total
    finally:
        system.close()


def refused(path: Path | str) -> str:
    """Import ``path``: it must fail with a message (no traceback), and status must still work."""
    result = runner.invoke(app, ["import", str(path)])
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    status = runner.invoke(app, ["status"])
    assert status.exit_code == 0, status.output
    return str(result.output)


def test_ids_that_are_not_uuids_are_refused_with_their_lines_and_nothing_is_written(tmp_path: Path) -> None:
    good = memory()
    path = export_file(
        tmp_path,
        [
            good,
            memory(id="my-note-1", content="A note with a hand-made id."),
            memory(id="../notes/a/b", content="An id with slashes would never open in Browse."),
            memory(
                content="A link to a bad id.",
                links=[{"to": "my-note-2", "relation": "relates_to", "created_at": NOW}],
            ),
        ],
    )

    output = refused(path)

    assert "Line 3: `id`" in output and "Line 4: `id`" in output and "Line 5: `links.0.to`" in output
    assert "my-note-1" in output and "not a UUID" in output
    assert "Line 2" not in output
    assert stored_count(tmp_path) == 0


def test_any_uuid_spelling_is_stored_in_its_canonical_form_with_its_links(tmp_path: Path) -> None:
    a, b = uuid.uuid4(), uuid.uuid4()
    path = export_file(
        tmp_path,
        [
            memory(id=str(a).upper(), content="Upper-case id."),
            memory(
                id="{" + b.hex + "}",
                content="Braced hex id.",
                links=[{"to": f"urn:uuid:{a}", "relation": "relates_to", "created_at": NOW}],
            ),
        ],
    )

    result = runner.invoke(app, ["import", str(path), "--json"])

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["links_added"] == 1
    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    stored = sorted(m.id for m in system.records.memories.get([str(a), str(b)]))
    links = system.records.links.outgoing([str(b)])
    system.close()
    assert stored == sorted([str(a), str(b)])
    assert [link.to_id for link in links[str(b)]] == [str(a)]


def test_every_problem_of_the_file_is_listed_with_its_line_and_nothing_is_written(tmp_path: Path) -> None:
    path = export_file(
        tmp_path,
        [
            memory(content="x" * 250_000),
            memory(content="   \n\t  "),
            memory(content="\x00\x00\x00"),
            memory(project="*"),
            memory(project="ops\x07team"),
            memory(tags=[f"tag-{n}" for n in range(5000)]),
            memory(source_date="0001-01-01T00:00:00"),
            memory(created_date="0001-01-01T00:00:00+05:00"),
            memory(importance_score=float("nan")),
            memory(metadata={"blob": "y" * 70_000}),
            memory(content="A fine memory among bad ones."),
        ],
    )

    output = refused(path)

    for number, words in [
        (2, "250,000 characters"),
        (3, "empty"),
        (4, "no visible characters"),
        (5, "project"),
        (6, "project"),
        (7, "5000 tags"),
        (9, "created_date"),
        (10, "importance_score"),
        (11, "metadata"),
    ]:
        line = next((text for text in output.splitlines() if f"Line {number}:" in text), "")
        assert words in line, (number, output)
    assert "Line 8" not in output and "Line 12" not in output  # a naive date is UTC; year 1 is a date
    assert output.startswith("Error: 9 problems in the file; nothing was imported.")
    assert stored_count(tmp_path) == 0


def test_a_file_of_many_bad_lines_lists_the_first_twenty_and_counts_the_rest(tmp_path: Path) -> None:
    path = export_file(tmp_path, [memory(content="") for _ in range(35)])

    output = refused(path)

    assert output.count("Line ") == 20 and "Line 21:" in output and "Line 22:" not in output
    assert "and 15 more" in output


def test_versions_and_links_inside_a_line_are_checked_too(tmp_path: Path) -> None:
    version = {
        "version": 1,
        "content": "z" * 120_000,
        "hierarchy_level": 2,
        "memory_type": "episodic",
        "importance_score": 0.5,
        "tags": [],
        "metadata": {},
        "project": "*",
        "replaced_at": NOW,
    }
    links = [
        {"to": str(uuid.uuid4()), "relation": "loves!", "created_at": NOW},
        {"to": str(uuid.uuid4()), "relation": "relates_to", "created_at": NOW, "note": "n" * 5000},
    ]
    path = export_file(tmp_path, [memory(versions=[version], links=links)])

    output = refused(path)

    for where in ("versions.0.content", "versions.0.project", "links.0.relation", "links.1.note"):
        assert where in output, output
    assert stored_count(tmp_path) == 0


def test_a_naive_date_is_read_as_utc(tmp_path: Path) -> None:
    line = memory(created_date="2024-05-01T12:00:00", source_date="0001-01-01T00:00:00")
    path = export_file(tmp_path, [line])

    result = runner.invoke(app, ["import", str(path)])

    assert result.exit_code == 0, result.output
    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    (stored,) = system.records.memories.get([line["id"]])
    system.close()
    assert stored.created_date.isoformat() == "2024-05-01T12:00:00+00:00"
    assert stored.source_date is not None and stored.source_date.year == 1
    assert runner.invoke(app, ["recall", "plain note about deploys"]).exit_code == 0


def test_a_line_longer_than_any_valid_line_is_refused_without_reading_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reading, "MAX_LINE_BYTES", 1_000_000)
    path = tmp_path / "huge.jsonl"
    huge = json.dumps(memory(content="w" * 8_000_000))
    path.write_text(json.dumps(header(2)) + "\n" + huge + "\n" + json.dumps(memory(content="")) + "\n")

    output = refused(path)
    tracemalloc.start()
    with pytest.raises(InvalidInputError), path.open("rb") as stream:
        read_import(stream, None, "default")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()

    assert "Line 2 is longer than 1,000,000 bytes" in output and "Line 3:" in output
    assert peak < 4_000_000, peak
    assert stored_count(tmp_path) == 0


class Zeros(io.RawIOBase):
    """/dev/zero as a stream (what stdin is for `import - < /dev/zero`)."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        buffer[:] = bytes(len(buffer))
        return len(buffer)


def test_endless_input_is_refused_at_the_line_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reading, "MAX_LINE_BYTES", 1_000_000)

    with pytest.raises(InvalidInputError, match="Line 1 is longer than 1,000,000 bytes"):
        read_import(io.BufferedReader(Zeros()), None, "default")


def test_devices_and_fifos_are_refused_as_not_regular_files(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)

    for path in ("/dev/zero", str(fifo)):
        output = refused(path)
        assert output == f"Error: {path} is not a regular file: give an export file (or '-' for stdin).\n"


def test_a_memory_loaded_from_markdown_is_not_overwritten_by_an_import(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "ops.md").write_text("# Deploys\n\nDeploys go out on Tuesdays after the review.\n")
    assert runner.invoke(app, ["load", str(notes)]).exit_code == 0
    exported = runner.invoke(app, ["export"]).stdout.splitlines()
    line = json.loads(exported[1])
    line["content"], line["metadata"] = "Deploys go out whenever.", {}
    exported[1] = json.dumps(line)

    result = runner.invoke(app, ["import", "-", "--json"], input="\n".join(exported))
    reloaded = runner.invoke(app, ["load", str(notes), "--json"])

    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["updated"], report["unchanged"]) == (0, 0)
    (skip,) = report["skipped"]
    assert skip["line"] == 2 and "loaded from" in skip["reason"] and "ops.md" in skip["reason"]
    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    (stored,) = system.records.memories.get([line["id"]])
    system.close()
    assert "Tuesdays" in stored.content and stored.source is SourceKind.MARKDOWN
    assert reloaded.exit_code == 0, reloaded.output


OFFICIAL_BAD = [
    {"type": "entity", "name": "Big", "entityType": "thing", "observations": ["o" * 120_000]},
    {"type": "entity", "name": "Odd", "entityType": "t" * 300, "observations": ["fine"]},
    {"type": "entity", "name": "Fine", "entityType": "thing", "observations": ["fine"]},
    {"type": "relation", "from": "Fine", "to": "Big", "relationType": "r" * 2000},
]


def test_an_official_memory_jsonl_gets_the_same_limits(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in OFFICIAL_BAD))

    output = refused(path)

    assert "Line 1:" in output and "characters" in output
    assert "Line 2:" in output and "tags" in output
    assert "Line 4:" in output and "note" in output
    assert "Line 3" not in output
    assert stored_count(tmp_path) == 0


def test_an_export_stops_at_a_memory_whose_line_an_import_could_not_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("cognitive_memory.transfer.exchange.MAX_LINE_BYTES", 5_000)
    stored = runner.invoke(app, ["store", "A long note. " * 500, "--json"])
    memory_id = json.loads(stored.stdout)["memory_id"]

    result = runner.invoke(app, ["export"])

    assert result.exit_code == 1
    assert f"Memory {memory_id} with its versions and links takes" in result.output


def test_a_text_holding_a_unicode_line_separator_round_trips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "First part\u2028second part\x85third part, one memory."
    assert runner.invoke(app, ["store", text]).exit_code == 0
    exported = runner.invoke(app, ["export"]).stdout
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(tmp_path / "fresh"))

    result = runner.invoke(app, ["import", "-", "--json"], input=exported)

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["added"] == 1
