"""`forget`, `trash list|restore|empty` and `prune` through typer's runner: what a user types to
get a forgotten memory back, and one `Error:` line with exit 1 for what is refused."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from memory_system.cli import app

runner = CliRunner()


def stored(text: str, *options: str) -> str:
    result = runner.invoke(app, ["store", text, *options, "--json"])
    assert result.exit_code == 0, result.output
    return str(json.loads(result.output)["memory_id"])


def listed() -> list[str]:
    result = runner.invoke(app, ["list", "--json"])
    return [memory["id"] for memory in json.loads(result.output)["memories"]]


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


def test_prune_apply_and_a_scripted_confirm_token(data_dir: Path) -> None:
    first = stored("Scratch: try a bigger cache.", "--tag", "scratch")
    applied = runner.invoke(app, ["prune", "--tag", "scratch", "--apply", "--json"])
    second = stored("Scratch: try a smaller cache.", "--tag", "scratch")
    token = json.loads(runner.invoke(app, ["prune", "--tag", "scratch", "--json"]).output)["confirm"]
    confirmed = runner.invoke(app, ["prune", "--tag", "scratch", "--confirm", token, "--json"])

    assert [item["id"] for item in json.loads(applied.output)["memories"]] == [first]
    assert [item["id"] for item in json.loads(confirmed.output)["memories"]] == [second]
    assert listed() == []


def test_prune_refusals_are_one_error_line_and_exit_1(data_dir: Path) -> None:
    stored("Scratch: a note.", "--tag", "scratch")

    empty = runner.invoke(app, ["prune"])
    bad_token = runner.invoke(app, ["prune", "--tag", "scratch", "--confirm", "1.abc"])
    bad_value = runner.invoke(app, ["prune", "--max-importance", "2"])

    for result in (empty, bad_token, bad_value):
        assert result.exit_code == 1, result.output
        assert result.output.startswith("Error: ") and result.output.count("\n") == 1, result.output
    assert "at least one criterion" in empty.output
