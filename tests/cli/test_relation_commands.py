"""`link`, `unlink` and `related` through typer's runner: links made, walked and removed, and one
`Error:` line with exit 1 for what the core or the request refuses."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memory_system.cli import app

runner = CliRunner()


def stored(text: str) -> str:
    result = runner.invoke(app, ["store", text, "--json"])
    assert result.exit_code == 0, result.output
    return str(json.loads(result.output)["memory_id"])


@pytest.mark.model
def test_a_weighted_link_of_a_relation_of_ones_own_five_links_away(data_dir: Path) -> None:
    ids = [stored(f"Step {n} of the migration plan.") for n in range(6)]
    chain = [runner.invoke(app, ["link", a, b, "-r", "Depends-On"]) for a, b in itertools.pairwise(ids[:5])]
    weighted = runner.invoke(app, ["link", ids[4], ids[5], "-r", "blocks_release", "--weight", "0.25"])
    walked = runner.invoke(app, ["related", ids[0], "--depth", "5", "--json"])
    text = runner.invoke(app, ["related", ids[5]])
    refused = runner.invoke(app, ["link", ids[0], ids[5], "-r", "part_of", "--weight", "2"])

    assert all(result.exit_code == 0 for result in chain), chain[0].output
    assert chain[0].output == f"✓ Linked: {ids[0]} depends_on {ids[1]} (weight 0.8)\n"
    assert weighted.output == f"✓ Linked: {ids[4]} blocks_release {ids[5]} (weight 0.25)\n"
    related = json.loads(walked.output)["related"]
    assert [(m["id"], m["relation"], m["depth"], m["weight"]) for m in related] == [
        *[(ids[n], "depends_on", n, 0.8) for n in range(1, 5)],
        (ids[5], "blocks_release", 5, 0.25),
    ]
    assert f"[depth 1] ← blocks_release (weight 0.25) {ids[4]}" in text.output
    assert refused.exit_code == 1 and refused.output.startswith("Error: "), refused.output
    assert "weight" in refused.output


@pytest.mark.model
def test_link_related_and_unlink_from_the_shell(data_dir: Path) -> None:
    old, new = stored("Backups run at 02:00 UTC."), stored("Backups now run hourly.")

    linked = runner.invoke(app, ["link", new, old, "--relation", "supersedes", "--note", "ops change"])
    walked = runner.invoke(app, ["related", old, "--depth", "2", "--relation", "supersedes", "--json"])
    text = runner.invoke(app, ["related", new])
    unlinked = runner.invoke(app, ["unlink", new, old, "--json"])
    after = runner.invoke(app, ["related", old, "--json"])

    assert linked.exit_code == 0, linked.output
    assert linked.output.splitlines() == [
        f"✓ Linked: {new} supersedes {old} (weight 0.8)",
        "Note: ops change",
    ]
    assert walked.exit_code == 0, walked.output
    (item,) = json.loads(walked.output)["related"]
    assert (item["id"], item["relation"], item["direction"], item["path"]) == (
        new,
        "supersedes",
        "incoming",
        [old, new],
    )
    assert f"[depth 1] supersedes → {old}" in text.output and f"Path: {new} > {old}" in text.output
    assert json.loads(unlinked.output)["removed"] == ["supersedes"]
    assert json.loads(after.output)["related"] == []


@pytest.mark.model
def test_refusals_are_one_error_line_and_exit_1(data_dir: Path) -> None:
    a, b = stored("The CDN caches images for a day."), stored("The CDN purges on deploy.")
    runner.invoke(app, ["link", a, b, "--relation", "supersedes"])

    unknown = runner.invoke(app, ["link", a, "no-such-id", "--relation", "relates_to"])
    cycle = runner.invoke(app, ["link", b, a, "--relation", "supersedes"])
    itself = runner.invoke(app, ["link", a, a, "--relation", "relates_to"])
    relation = runner.invoke(app, ["link", a, b, "--relation", "replaces!"])
    depth = runner.invoke(app, ["related", a, "--depth", "6"])

    for result in (unknown, cycle, itself, relation, depth):
        assert result.exit_code == 1, result.output
        assert result.output.startswith("Error: ") and result.output.count("\n") == 1, result.output
    assert "'no-such-id'" in unknown.output
    assert f"{b} cannot supersede {a}" in cycle.output
    assert "cannot be linked to itself" in itself.output
    assert "'replaces!'; use one of relates_to, similar, depends_on" in relation.output
    assert "depth 6" in depth.output
