"""`export` and `import` through typer's runner (the hash encoder stands in for the model): a
lossless round trip compared field by field, idempotent re-imports, updates that keep a version,
dry runs, the official MCP memory.jsonl, bad lines refused whole, and kill -9 during an import."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cognitive_memory import linking
from cognitive_memory.core.records import MemoryEdit
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.system import CognitiveSystem
from cognitive_memory.transfer.official_memory import entity_id
from memory_system.cli import app
from tests.killing import run_memory_system
from tests.transferring import imported, invoke, opened, runner


@pytest.fixture(autouse=True)
def hash_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands build their system with the hash encoder instead of the model."""
    monkeypatch.setattr("cognitive_memory.main.model_encoder", lambda settings: HashEncoder())


def fill(system: CognitiveSystem) -> list[str]:
    """Memories with varied fields, projects, tags, an update (a version), links with notes and an
    access count; returns their ids."""
    a = system.store(
        "Deploys go out on Tuesdays after the review.",
        hierarchy_level=0,
        memory_type="semantic",
        importance_score=0.9,
        tags=("ops", "deploy"),
        metadata={"source": "handbook", "nested": {"n": 1}},
        source_date=datetime(2024, 5, 1, 12, 30, tzinfo=UTC),
        session_id="s-1",
    ).memory.id
    b = system.store("The staging database was restored from Monday's dump.", session_id="s-1").memory.id
    c = system.store(
        "Use ruff for linting in every service.",
        project="infra",
        tags=("tooling",),
        importance_score=0.2,
        key="linter",
    ).memory.id
    d = system.store(
        "Global rule: never force-push to main.", project="global", memory_type="episodic"
    ).memory.id
    system.edits.update(
        b, MemoryEdit(text="The staging database was restored from Sunday's dump.", tags=["db"])
    )
    linking.link(system.records, b, a, "caused_by", note="the restore delayed the deploy")
    linking.link(system.records, c, d, "blocks_release", weight=0.35)
    system.retrieve("staging database dump", max_results=3)
    system.flush()
    return [a, b, c, d]


def snapshot(system: CognitiveSystem) -> dict[str, Any]:
    """Every memory, vector, version and link of a store, by id."""
    memories = {m.id: m for batch in system.records.memories.batches() for m in batch}
    ids = list(memories)
    return {
        "memories": memories,
        "vectors": system.records.memories.vectors(ids),
        "versions": system.records.history.of(ids),
        "links": system.records.links.outgoing(ids),
    }


@pytest.fixture
def source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    system = opened(tmp_path / "source", monkeypatch)
    fill(system)
    state = snapshot(system)
    system.close()
    yield state


@pytest.mark.parametrize("vectors", [True, False], ids=["with-vectors", "re-embedded"])
def test_export_then_import_into_a_fresh_directory_is_lossless(
    source: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, vectors: bool
) -> None:
    out = tmp_path / "memories.jsonl"
    invoke("export", "--output", str(out), *(["--with-vectors"] if vectors else []))
    header = json.loads(out.read_text().splitlines()[0])
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(tmp_path / "fresh"))

    report = imported(str(out))

    assert header["format"] == "cognitive-memory-export" and header["count"] == 4
    assert (header["model"], header["dimensions"]) == ("hash-384", 384)
    assert (report["added"], report["updated"], report["links_added"], report["skipped"]) == (4, 0, 2, [])
    assert report["embedded"] == (0 if vectors else 4)
    system = opened(tmp_path / "fresh", monkeypatch)
    copy = snapshot(system)
    system.close()
    assert copy["memories"].keys() == source["memories"].keys()
    for memory_id, memory in source["memories"].items():
        twin = copy["memories"][memory_id]
        for name in memory.__dataclass_fields__:
            if name != "cognitive_embedding":
                assert getattr(twin, name) == getattr(memory, name), (memory_id, name)
        assert np.allclose(copy["vectors"][memory_id], source["vectors"][memory_id], atol=1e-6)
    assert copy["versions"] == source["versions"] and len(copy["versions"]) == 1
    assert copy["links"] == source["links"]
    assert sum(len(links) for links in copy["links"].values()) == 2


def test_importing_the_same_export_again_changes_nothing(source: dict[str, Any], tmp_path: Path) -> None:
    exported = invoke("export").stdout

    again = imported("-", input=exported)

    assert (again["added"], again["updated"], again["unchanged"]) == (0, 0, 4)
    assert (again["links_added"], again["links_unchanged"], again["skipped"]) == (0, 2, [])


def test_a_changed_memory_becomes_an_update_that_keeps_a_version(
    source: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = invoke("export").stdout.splitlines()
    first = json.loads(lines[1])
    first["content"], first["tags"] = "Deploys go out on Thursdays after the review.", ["ops"]
    lines[1] = json.dumps(first)

    report = imported("-", input="\n".join(lines))

    assert (report["added"], report["updated"], report["unchanged"], report["embedded"]) == (0, 1, 3, 1)
    system = opened(tmp_path / "source", monkeypatch)
    (memory,) = system.records.memories.get([first["id"]])
    versions = system.records.history.of([first["id"]])[first["id"]]
    system.close()
    assert (memory.content, memory.tags) == (first["content"], ("ops",))
    assert memory.access_count == source["memories"][first["id"]].access_count
    assert [(v.version, v.content, v.tags) for v in versions] == [
        (1, "Deploys go out on Tuesdays after the review.", ("ops", "deploy"))
    ]


def test_a_dry_run_writes_nothing_and_reports_the_real_counts(
    source: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exported = invoke("export").stdout
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(tmp_path / "fresh"))

    dry = imported("-", "--dry-run", input=exported)
    text = invoke("import", "-", "--dry-run", input=exported).stdout
    after_dry = opened(tmp_path / "fresh", monkeypatch)
    count = after_dry.records.memories.counts().total
    after_dry.close()
    real = imported("-", input=exported)

    assert count == 0
    assert dry["dry_run"] and text.startswith("Dry run of - (cognitive-memory-export), nothing was written")
    assert {k: v for k, v in dry.items() if k != "dry_run"} == {
        k: v for k, v in real.items() if k != "dry_run"
    }


def test_export_of_one_project_holds_only_its_memories(source: dict[str, Any]) -> None:
    lines = invoke("export", "--project", "infra").stdout.splitlines()

    header, *memories = (json.loads(line) for line in lines)

    assert (header["count"], header["project"]) == (1, "infra")
    assert [m["content"] for m in memories] == ["Use ruff for linting in every service."]
    assert memories[0]["links"][0]["relation"] == "blocks_release"


def test_links_to_memories_left_out_are_skipped_and_counted(
    source: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exported = invoke("export", "--project", "infra").stdout
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(tmp_path / "fresh"))

    report = imported("-", input=exported)

    assert (report["added"], report["links_added"]) == (1, 0)
    (skip,) = report["skipped"]
    assert "blocks_release" in skip["reason"] and "no memory" in skip["reason"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "Line 3 is not JSON"),
        ('{"id": "x", "content": "y", "hierarchy_level": 7}', "Line 3: `id` is 'x', not a UUID"),
        (
            '{"id": "x"}',
            "Line 3: `id` is 'x', not a UUID (memory ids are UUIDs: give it one, e.g. from `uuidgen`); "
            "content: Field required",
        ),
    ],
)
def test_a_bad_line_is_refused_with_its_number_and_nothing_is_written(
    source: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str, message: str
) -> None:
    lines = invoke("export").stdout.splitlines()
    lines[2] = line
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(tmp_path / "fresh"))

    result = runner.invoke(app, ["import", "-"], input="\n".join(lines))

    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {message}") and result.output.count("\n") == 1, result.output
    system = opened(tmp_path / "fresh", monkeypatch)
    assert system.records.memories.counts().total == 0
    system.close()


def test_a_cut_file_and_a_missing_file_are_one_error_line(source: dict[str, Any], tmp_path: Path) -> None:
    lines = invoke("export").stdout.splitlines()

    cut = runner.invoke(app, ["import", "-"], input="\n".join(lines[:-1]))
    missing = runner.invoke(app, ["import", str(tmp_path / "nope.jsonl")])

    cut_inside = runner.invoke(app, ["import", "-"], input="\n".join(lines)[:-40])

    for result in (cut, cut_inside, missing):
        assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert "holds 3 memories but its header says 4: it is incomplete" in cut.output
    assert cut_inside.output.startswith(f"Error: Line {len(lines)} is cut short: the file ends inside it")
    assert missing.output == f"Error: {tmp_path / 'nope.jsonl'} does not exist.\n"


def test_a_file_with_more_memories_than_its_header_says_is_not_called_cut_short(
    source: dict[str, Any],
) -> None:
    # It said "it is incomplete (an export cut short?)" of a file holding more lines, not fewer.
    lines = invoke("export").stdout.splitlines()
    grown = [*lines, lines[-1].replace(json.loads(lines[-1])["id"], "0" * 8 + "-0000-4000-8000-" + "0" * 12)]

    refused = runner.invoke(app, ["import", "-"], input="\n".join(grown))

    assert refused.exit_code == 1, refused.output
    assert "holds 5 memories but its header says 4: lines were added after the export" in refused.output


OFFICIAL = [
    {"type": "entity", "name": "John_Smith", "entityType": "person", "observations": ["Speaks Spanish"]},
    {"type": "entity", "name": "Anthropic", "entityType": "organization", "observations": ["Makes Claude"]},
    {"type": "relation", "from": "John_Smith", "to": "Anthropic", "relationType": "works_at"},
    {"type": "relation", "from": "John_Smith", "to": "Anthropic", "relationType": "admires"},
    {"type": "relation", "from": "John_Smith", "to": "Anthropic", "relationType": "depends on"},
    {"type": "relation", "from": "Anthropic", "to": "John_Smith", "relationType": "is similar to"},
    {"type": "relation", "from": "John_Smith", "to": "Nobody", "relationType": "knows"},
]


def test_an_official_memory_jsonl_imports_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in OFFICIAL) + "\n")

    first = imported(str(path), "--project", "people")
    second = imported(str(path), "--project", "people")

    assert (first["format"], first["added"], first["links_added"]) == ("official-memory", 2, 4)
    assert [s["reason"] for s in first["skipped"]] == [
        f"link {entity_id('John_Smith')} -relates_to-> {entity_id('Nobody')} (John_Smith knows Nobody): "
        f"no memory {entity_id('Nobody')}"
    ]
    assert (second["added"], second["updated"], second["unchanged"], second["links_added"]) == (0, 0, 2, 0)
    system = opened(tmp_path / "data", monkeypatch)
    (john,) = system.records.memories.get([entity_id("John_Smith")])
    links = system.records.links.outgoing([john.id])[john.id]
    system.close()
    assert john.content == "John_Smith (person)\n- Speaks Spanish"
    assert (john.project, int(john.hierarchy_level)) == ("people", 0)
    assert john.tags == ("imported", "official-memory", "entity:person")
    assert sorted((link.relation, link.note) for link in links) == [
        ("depends_on", "John_Smith depends on Anthropic"),
        ("part_of", "John_Smith works_at Anthropic"),
        ("relates_to", "John_Smith admires Anthropic"),
    ]


def test_an_entity_with_new_observations_is_updated_with_a_version(tmp_path: Path) -> None:
    lines = [json.dumps(line) for line in OFFICIAL[:2]]
    invoke("import", "-", input="\n".join(lines))
    grown = {**OFFICIAL[0], "observations": ["Speaks Spanish", "Lives in Madrid"]}

    report = imported("-", "--format", "official-memory", input=json.dumps(grown))

    assert (report["updated"], report["unchanged"]) == (1, 0)


def test_a_bad_official_line_names_its_number(tmp_path: Path) -> None:
    lines = [json.dumps(OFFICIAL[0]), json.dumps({"type": "entity", "name": "x"})]

    result = runner.invoke(app, ["import", "-"], input="\n".join(lines))

    assert result.exit_code == 1
    assert result.output.startswith("Error: Line 2: entityType: Field required"), result.output


@pytest.mark.subprocess
def test_kill_9_during_an_import_leaves_the_old_state_or_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    system = opened(tmp_path / "source", monkeypatch)
    system.store_many([f"Note {n}: the {n}th deploy checklist item." for n in range(3000)])
    system.close()
    out = tmp_path / "big.jsonl"
    invoke("export", "--output", str(out))

    whole = run_memory_system(tmp_path / "whole", ("import", str(out)))
    counts = []
    for n, share in enumerate((0.3, 0.5, 0.65, 0.8, 0.95)):
        run_memory_system(tmp_path / f"killed-{n}", ("import", str(out)), whole * share)
        system = opened(tmp_path / f"killed-{n}", monkeypatch)
        counts.append(system.records.memories.counts().total)
        system.close()

    complete = opened(tmp_path / "whole", monkeypatch)
    assert complete.records.memories.counts().total == 3000
    complete.close()
    # Kills spread over the run land before, during and after its one write transaction (on this
    # machine: 0, 0, 0, 3000, 3000); whichever it hit, no store holds part of the file.
    assert set(counts) <= {0, 3000}, counts


def test_a_text_the_store_already_holds_is_skipped_and_its_links_follow(
    source: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exported = invoke("export").stdout
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(tmp_path / "fresh"))
    mine = json.loads(invoke("store", "Deploys go out on Tuesdays after the review.", "--json").stdout)

    report = imported("-", input=exported)

    (skip,) = report["skipped"]
    assert skip["reason"] == f"memory {mine['memory_id']} already holds this text" and skip["line"] == 2
    assert (report["added"], report["links_added"]) == (3, 2)
    system = opened(tmp_path / "fresh", monkeypatch)
    cause = [m for m in source["memories"].values() if "staging" in m.content][0]
    (link,) = system.records.links.outgoing([cause.id])[cause.id]
    system.close()
    assert (link.to_id, link.note) == (mine["memory_id"], "the restore delayed the deploy")


def test_a_keyed_memory_whose_key_is_held_here_is_imported_without_it(
    source: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exported = invoke("export").stdout
    assert sum('"key": "linter"' in line for line in exported.splitlines()) == 1
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(tmp_path / "other"))
    system = opened(tmp_path / "other", monkeypatch)
    holder = system.store("Use pylint in every service.", project="infra", key="linter").memory.id
    system.close()

    report = imported("-", input=exported)

    assert (report["added"], report["skipped"]) == (4, [])
    (unkeyed,) = report["unkeyed"]
    assert unkeyed["reason"] == f"imported without its key 'linter': memory {holder} holds it"
    system = opened(tmp_path / "other", monkeypatch)
    (kept,) = system.records.memories.keyed(["linter"], ["infra"])
    (imported_memory,) = system.records.memories.get([unkeyed["id"]])
    system.close()
    assert kept.id == holder and imported_memory.key is None


def test_two_keys_of_an_older_store_that_fold_alike_import_both_memories_the_second_unkeyed(
    source: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An older version lower-cased keys, so ``linter`` and fullwidth ``ｌｉｎｔｅｒ`` could be two
    keys of one project; folded they are one."""
    lines = [json.loads(line) for line in invoke("export").stdout.splitlines()]
    (twin,) = [line for line in lines if "never force-push" in line.get("content", "")]
    twin.update(project="infra", key="ｌｉｎｔｅｒ")
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(tmp_path / "other"))

    report = imported("-", input="\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n")

    assert (report["added"], report["skipped"]) == (4, [])
    (unkeyed,) = report["unkeyed"]
    assert unkeyed["id"] == twin["id"] and "without its key 'linter'" in unkeyed["reason"]
    system = opened(tmp_path / "other", monkeypatch)
    (kept,) = system.records.memories.keyed(["linter"], ["infra"])
    (second,) = system.records.memories.get([twin["id"]])
    system.close()
    assert "ruff" in kept.content and second.key is None
