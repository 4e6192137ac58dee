"""`forget`, `trash list|restore|empty` and `prune` through typer's runner: what a user types to
get a forgotten memory back, and one `Error:` line with exit 1 for what is refused."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cognitive_memory.encoding import HashEncoder
from memory_system.cli import app

runner = CliRunner()


def stored(text: str, *options: str) -> str:
    result = runner.invoke(app, ["store", text, *options, "--json"])
    assert result.exit_code == 0, result.output
    return str(json.loads(result.output)["memory_id"])


def listed() -> list[str]:
    result = runner.invoke(app, ["list", "--json"])
    return [memory["id"] for memory in json.loads(result.output)["memories"]]


@pytest.mark.model
def test_forget_then_trash_list_and_restore_from_the_shell(data_dir: Path) -> None:
    memory_id = stored("The VPN config lives in the ops vault.", "--tag", "vpn")

    forgot = runner.invoke(app, ["forget", memory_id])
    trash = runner.invoke(app, ["trash", "list", "--json"])
    text = runner.invoke(app, ["trash", "list"])
    got = runner.invoke(app, ["get", memory_id, "--json"])
    restored = runner.invoke(app, ["trash", "restore", memory_id, "--json"])
    again = runner.invoke(app, ["trash", "restore", memory_id])

    assert forgot.exit_code == 0, forgot.output
    (entry,) = json.loads(trash.output)["entries"]
    assert (entry["id"], entry["reason"], entry["preview"]) == (
        memory_id,
        "forgotten",
        "The VPN config lives in the ops vault.",
    )
    assert memory_id in text.output and "forgotten" in text.output
    assert json.loads(got.output)["in_trash"] == [memory_id]
    assert json.loads(restored.output)["restored"] == [memory_id]
    assert listed() == [memory_id]
    assert again.exit_code == 3 and f"Not in the trash: {memory_id}" in again.output


@pytest.mark.model
def test_trash_empty_asks_then_deletes_for_good(data_dir: Path) -> None:
    memory_id = stored("A note about the old build server.")
    runner.invoke(app, ["forget", memory_id])

    declined = runner.invoke(app, ["trash", "empty"], input="n\n")
    kept_young = runner.invoke(app, ["trash", "empty", "--older-than-days", "1", "--yes", "--json"])
    emptied = runner.invoke(app, ["trash", "empty", "--yes", "--json"])

    assert declined.exit_code == 0 and "Nothing deleted." in declined.output
    assert json.loads(kept_young.output)["purged"] == 0
    assert json.loads(emptied.output)["purged"] == 1
    assert json.loads(runner.invoke(app, ["trash", "list", "--json"]).output)["total"] == 0


@pytest.mark.model
def test_prune_lists_asks_and_the_trash_brings_the_pruned_back(data_dir: Path) -> None:
    scratch = [stored(f"Scratch note {n} about a flaky test.", "--tag", "scratch") for n in range(2)]
    keep = stored("The deploy guide is in docs/deploy.md.", "--tag", "docs")

    dry = runner.invoke(app, ["prune", "--tag", "scratch", "--dry-run", "--json"])
    declined = runner.invoke(app, ["prune", "--tag", "scratch"], input="n\n")
    assert sorted(listed()) == sorted([*scratch, keep])
    accepted = runner.invoke(app, ["prune", "--tag", "scratch"], input="y\n")

    plan = json.loads(dry.output)
    assert sorted(item["id"] for item in plan["memories"]) == sorted(scratch) and plan["confirm"]
    assert "Nothing pruned." in declined.output and "tagged scratch" in declined.output
    assert accepted.exit_code == 0, accepted.output
    assert "Moved 2 memories to the trash" in accepted.output
    assert listed() == [keep]

    restored = runner.invoke(app, ["trash", "restore", *scratch])

    assert restored.exit_code == 0, restored.output
    assert sorted(listed()) == sorted([*scratch, keep])


@pytest.mark.model
def test_prune_apply_and_a_scripted_confirm_token(data_dir: Path) -> None:
    first = stored("Scratch: try a bigger cache.", "--tag", "scratch")
    applied = runner.invoke(app, ["prune", "--tag", "scratch", "--apply", "--json"])
    second = stored("Scratch: try a smaller cache.", "--tag", "scratch")
    token = json.loads(runner.invoke(app, ["prune", "--tag", "scratch", "--json"]).output)["confirm"]
    confirmed = runner.invoke(app, ["prune", "--tag", "scratch", "--confirm", token, "--json"])

    assert [item["id"] for item in json.loads(applied.output)["memories"]] == [first]
    assert [item["id"] for item in json.loads(confirmed.output)["memories"]] == [second]
    assert listed() == []


@pytest.mark.model
def test_prune_refusals_are_one_error_line_and_exit_1(data_dir: Path) -> None:
    stored("Scratch: a note.", "--tag", "scratch")

    empty = runner.invoke(app, ["prune"])
    bad_token = runner.invoke(app, ["prune", "--tag", "scratch", "--confirm", "1.abc"])
    bad_value = runner.invoke(app, ["prune", "--max-importance", "2"])

    for result in (empty, bad_token, bad_value):
        assert result.exit_code == 1, result.output
        assert result.output.startswith("Error: ") and result.output.count("\n") == 1, result.output
    assert "at least one criterion" in empty.output


def history_of(memory_id: str) -> tuple[str, list[str]]:
    """The memory's text now and the texts of its earlier versions, oldest first."""
    got = runner.invoke(app, ["get", memory_id, "--history", "--json"])
    assert got.exit_code == 0, got.output
    (memory,) = json.loads(got.output)["memories"]
    return memory["content"], [version["content"] for version in memory["history"]]


def forget_import_forget(monkeypatch: pytest.MonkeyPatch) -> tuple[str, str, str]:
    """Store, export, update the text, forget, import the old export, forget again (issue 27, item 2).
    Returns the id, the old text and the updated text."""
    monkeypatch.setattr("cognitive_memory.main.model_encoder", lambda settings: HashEncoder())
    old, updated = "The build cache lives on the NFS share.", "The build cache moved to the local SSD."
    memory_id = stored(old)
    exported = runner.invoke(app, ["export"]).stdout
    assert runner.invoke(app, ["update", memory_id, "--text", updated]).exit_code == 0
    assert runner.invoke(app, ["forget", memory_id]).exit_code == 0
    imported = runner.invoke(app, ["import", "-", "--json"], input=exported)
    assert json.loads(imported.stdout)["added"] == 1, imported.output
    assert runner.invoke(app, ["forget", memory_id]).exit_code == 0
    return memory_id, old, updated


def test_forget_import_forget_keeps_the_updated_text_restorable(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory_id, old, updated = forget_import_forget(monkeypatch)

    trash = json.loads(runner.invoke(app, ["trash", "list", "--json"]).output)
    restored = runner.invoke(app, ["trash", "restore", memory_id, "--json"])

    assert [(e["id"], e["preview"]) for e in trash["entries"]] == [(memory_id, old), (memory_id, updated)]
    assert json.loads(restored.output)["restored"] == [memory_id]
    assert history_of(memory_id) == (old, [old, updated])
    assert json.loads(runner.invoke(app, ["trash", "list", "--json"]).output)["total"] == 0


def test_restoring_one_trash_entry_brings_back_that_text(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory_id, old, updated = forget_import_forget(monkeypatch)
    entries = json.loads(runner.invoke(app, ["trash", "list", "--json"]).output)["entries"]
    (entry,) = [e["entry"] for e in entries if e["preview"] == updated]
    listed_text = runner.invoke(app, ["trash", "list"]).output

    restored = runner.invoke(app, ["trash", "restore", "--entry", str(entry), "--json"])
    again = runner.invoke(app, ["trash", "restore", "--entry", str(entry)])

    assert f"#{entry}" in listed_text
    assert json.loads(restored.output)["restored"] == [memory_id], restored.output
    assert history_of(memory_id) == (updated, [old, old])
    assert again.exit_code == 3 and f"Not in the trash: entry {entry}" in again.output


def test_a_prune_token_is_refused_with_other_criteria(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("cognitive_memory.main.model_encoder", lambda settings: HashEncoder())
    memory_id = stored("Notes from the 2023 offsite planning session.")
    with sqlite3.connect(data_dir / "cognitive_memory.db") as conn:  # stored 100 days ago
        conn.execute("UPDATE memories SET timestamp = timestamp - 100 * 86400")
    plan = json.loads(runner.invoke(app, ["prune", "--older-than-days", "90", "--dry-run", "--json"]).output)

    other = runner.invoke(app, ["prune", "--older-than-days", "60", "--confirm", plan["confirm"]])
    same = runner.invoke(app, ["prune", "--older-than-days", "90", "--confirm", plan["confirm"], "--json"])
    again = runner.invoke(app, ["prune", "--older-than-days", "90", "--confirm", plan["confirm"]])

    assert [item["id"] for item in plan["memories"]] == [memory_id]
    assert other.exit_code == 1 and other.output.startswith("Error: "), other.output
    assert "criteria differ" in other.output
    assert [item["id"] for item in json.loads(same.output)["memories"]] == [memory_id]
    assert again.exit_code == 1 and "already used" in again.output, again.output


def test_restoring_an_id_in_use_again_overwrites_nothing_and_says_so(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("cognitive_memory.main.model_encoder", lambda settings: HashEncoder())
    memory_id = stored("The build cache lives on the NFS share.")
    exported = runner.invoke(app, ["export"]).stdout
    runner.invoke(app, ["update", memory_id, "--text", "The build cache moved to the local SSD."])
    runner.invoke(app, ["forget", memory_id])
    runner.invoke(app, ["import", "-"], input=exported)

    refused = runner.invoke(app, ["trash", "restore", memory_id, "--json"])
    nothing = runner.invoke(app, ["trash", "restore"])

    assert refused.exit_code == 3 and json.loads(refused.output)["in_use"] == [memory_id]
    assert history_of(memory_id) == ("The build cache lives on the NFS share.", [])
    assert json.loads(runner.invoke(app, ["trash", "list", "--json"]).output)["total"] == 1
    assert nothing.exit_code == 1 and nothing.output.startswith("Error: "), nothing.output


def test_each_trash_entry_is_purged_on_its_own(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memory_id, old, updated = forget_import_forget(monkeypatch)
    with sqlite3.connect(data_dir / "cognitive_memory.db") as conn:  # the first went 3 days ago
        conn.execute("UPDATE trash SET trashed_at = trashed_at - 3 * 86400 WHERE content = ?", (updated,))

    purged = runner.invoke(app, ["trash", "empty", "--older-than-days", "2", "--yes", "--json"])

    assert json.loads(purged.output)["purged"] == 1
    entries = json.loads(runner.invoke(app, ["trash", "list", "--json"]).output)["entries"]
    assert [(e["id"], e["preview"]) for e in entries] == [(memory_id, old)]


def test_trash_list_takes_a_project_and_counts_the_other_projects(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("cognitive_memory.main.model_encoder", lambda settings: HashEncoder())
    memory_id = stored("Lint with ruff.", "--project", "programming")
    runner.invoke(app, ["forget", memory_id])

    every = json.loads(runner.invoke(app, ["trash", "list", "--json"]).output)
    here = runner.invoke(app, ["trash", "list", "--project", "default"])
    there = json.loads(runner.invoke(app, ["trash", "list", "--project", "programming", "--json"]).output)
    refused = runner.invoke(app, ["trash", "list", "--project", "web*"])

    assert [e["id"] for e in every["entries"]] == [e["id"] for e in there["entries"]] == [memory_id]
    assert here.exit_code == 0 and memory_id not in here.output
    assert "Nothing in the trash of project 'default' and global; 1 in other projects" in here.output
    assert there["message"].startswith("1 memory in the trash of project 'programming' and global;")
    assert refused.exit_code == 1 and refused.output.startswith("Error: "), refused.output


def test_forget_takes_keys_of_the_project_and_names_the_unknown_ones(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("cognitive_memory.main.model_encoder", lambda settings: HashEncoder())
    memory_id = stored("Indent with four spaces.", "--key", "Coding-Style", "--project", "programming")

    elsewhere = runner.invoke(app, ["forget", "--key", "coding-style"])
    forgot = runner.invoke(
        app, ["forget", "--key", "CODING-STYLE", "--key", "nope", "--project", "programming", "--json"]
    )
    nothing = runner.invoke(app, ["forget"])

    assert elsewhere.exit_code == 3 and "Not found: coding-style" in elsewhere.output
    assert forgot.exit_code == 3, forgot.output
    assert (json.loads(forgot.output)["forgotten"], json.loads(forgot.output)["missing"]) == (
        [memory_id],
        ["nope"],
    )
    assert nothing.exit_code == 1 and nothing.output.startswith("Error: "), nothing.output
    assert "Error: Give memory ids or keys" in nothing.output
