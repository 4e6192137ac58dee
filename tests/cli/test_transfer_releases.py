"""Exports across releases through typer's runner: a file an earlier release wrote (its source
kind, speaker and origin in ``metadata``, ``strength`` and ``dimensions`` beside them) imports with
the record's fields set, and a new export shows them in ``metadata`` as those releases read it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cognitive_memory.core.memory import SourceKind
from cognitive_memory.encoding import HashEncoder
from tests.transferring import imported, invoke, opened


@pytest.fixture(autouse=True)
def hash_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands build their system with the hash encoder instead of the model."""
    monkeypatch.setattr("cognitive_memory.main.model_encoder", lambda settings: HashEncoder())


LESSON_ID = "5b0f3c1e-2a4d-4e6f-8a9b-0c1d2e3f4a5b"
# A memory line as releases before the speaker and origin columns wrote it: its source kind,
# speaker and origin in ``metadata``, with ``strength`` and ``dimensions`` beside it.
EARLIER_LINE = {
    "id": LESSON_ID,
    "content": "Pin the base image digest in every Dockerfile.",
    "hierarchy_level": 0,
    "memory_type": "semantic",
    "created_date": "2026-11-20T10:00:00+00:00",
    "timestamp": "2026-11-20T10:00:00+00:00",
    "importance_score": 0.8,
    "strength": 1.0,
    "metadata": {"loader_type": "session_lesson", "lesson_type": "warning", "speaker": "Ada"},
    "tags": ["session-lesson", "warning"],
    "dimensions": {},
    "session_id": "s-9",
    "project": "default",
    "versions": [],
    "links": [],
}


def _export_file(*lines: dict[str, Any]) -> str:
    header = {
        "format": "cognitive-memory-export",
        "version": 1,
        "model": "hash-384",
        "dimensions": 384,
        "exported_at": "2026-11-20T11:00:00+00:00",
        "count": len(lines),
        "project": None,
    }
    return "\n".join(json.dumps(line) for line in (header, *lines)) + "\n"


def test_an_export_of_an_earlier_release_imports_with_the_source_kind_speaker_and_origin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    note_id = "6c1a4d2f-3b5e-4f70-9bac-1d2e3f4a5b6c"
    note = EARLIER_LINE | {
        "id": note_id,
        "content": "# Deploys\nDeploys go out on Tuesdays.",
        "metadata": {"loader_type": "markdown", "source_path": "/notes/deploys.md", "title": "Deploys"},
        "tags": [],
    }
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(tmp_path / "fresh"))

    report = imported("-", input=_export_file(EARLIER_LINE, note))

    system = opened(tmp_path / "fresh", monkeypatch)
    lesson, loaded = system.records.memories.get([LESSON_ID, note_id])
    system.close()
    assert report["added"] == 2
    assert (lesson.source, lesson.speaker, lesson.origin) == (SourceKind.SESSION_LESSON, "Ada", None)
    assert dict(lesson.metadata) == {"lesson_type": "warning"}
    assert (loaded.source, loaded.speaker, loaded.origin) == (SourceKind.MARKDOWN, None, "/notes/deploys.md")
    assert dict(loaded.metadata) == {"title": "Deploys"}
    shown = json.loads(invoke("get", LESSON_ID, note_id, "--json").stdout)
    assert [m["metadata"] for m in shown["memories"]] == [EARLIER_LINE["metadata"], note["metadata"]]


def test_an_export_shows_the_source_kind_and_speaker_in_metadata_as_earlier_releases_read_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    system = opened(tmp_path / "source", monkeypatch)
    turn = system.store("Ada: we ship on Friday.", metadata={"source_info": "chat"}, speaker="Ada").memory
    lesson = system.store("Always pin the digest.", source=SourceKind.SESSION_LESSON).memory
    system.close()

    exported = invoke("export", "--with-vectors").stdout
    lines = [json.loads(line) for line in exported.splitlines()[1:]]

    by_id = {line["id"]: line for line in lines}
    assert by_id[turn.id]["metadata"] == {"source_info": "chat", "speaker": "Ada"}
    assert by_id[lesson.id]["metadata"] == {"loader_type": "session_lesson"}
    assert not {"strength", "dimensions"} & {key for line in lines for key in line}
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(tmp_path / "fresh"))
    imported("-", input=exported)
    system = opened(tmp_path / "fresh", monkeypatch)
    copies = {m.id: m for m in system.records.memories.get([turn.id, lesson.id])}
    system.close()
    assert (copies[turn.id].speaker, dict(copies[turn.id].metadata)) == ("Ada", {"source_info": "chat"})
    assert copies[lesson.id].source is SourceKind.SESSION_LESSON
