"""`get` and `list` through typer's runner: whole records, exit 3 on unknown ids, pages with a
cursor, filters, and one-line refusals of bad input."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cognitive_memory.encoding import HashEncoder
from cognitive_memory.service import SHORT_ID_CHARS
from memory_system.cli import app

runner = CliRunner()

LONG_TEXT = (
    "When the ingest queue backs up past ten thousand messages, scale the workers to eight, wait for "
    "the lag graph to turn, then drain the dead-letter queue by hand with the replay script in the "
    "ops repository; never purge it, the messages there are the ones customers are waiting for."
)


def stored_id(*arguments: str) -> str:
    result = runner.invoke(app, ["store", *arguments, "--json"])
    assert result.exit_code == 0, result.output
    memory_id: str = json.loads(result.output)["memory_id"]
    return memory_id


@pytest.mark.model
def test_get_prints_a_memory_whole_and_exits_3_when_an_id_is_unknown(data_dir: Path) -> None:
    memory_id = stored_id(LONG_TEXT, "--tag", "ops")

    shown = runner.invoke(app, ["get", memory_id, "--history"])
    partly = runner.invoke(app, ["get", memory_id, "no-such-memory", "--json"])

    assert shown.exit_code == 0, shown.output
    assert shown.output.startswith("✓ Found 1 of 1 memories")
    assert LONG_TEXT in shown.output and "History (0 earlier versions):" in shown.output
    assert partly.exit_code == 3
    body = json.loads(partly.output)
    assert body["missing"] == ["no-such-memory"]
    assert [m["id"] for m in body["memories"]] == [memory_id]
    assert body["memories"][0]["history"] is None


@pytest.mark.model
def test_list_pages_with_the_cursor_it_prints_and_filters_like_recall(data_dir: Path) -> None:
    ids = [
        stored_id("Rotate the staging TLS certificate every sixty days.", "--tag", "ops"),
        stored_id("The staging TLS certificate renewal failed last night.", "--tag", "incident"),
        stored_id("Staging runs on three nodes behind one load balancer.", "--tag", "ops"),
    ]
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()

    first = json.loads(runner.invoke(app, ["list", "--limit", "2", "--json"]).output)
    rest = json.loads(
        runner.invoke(app, ["list", "--limit", "2", "--cursor", first["next_cursor"], "--json"]).output
    )
    ops = runner.invoke(app, ["list", "--tag", "ops"])
    later = runner.invoke(app, ["list", "--after", tomorrow])

    assert [m["id"] for m in first["memories"] + rest["memories"]] == list(reversed(ids))
    assert (first["total"], rest["next_cursor"]) == (3, None)
    assert ops.exit_code == 0, ops.output
    assert ops.output.startswith("📋 2 of 2 memories, newest first")
    assert "Staging runs on three nodes" in ops.output and "renewal failed" not in ops.output
    assert later.exit_code == 0 and later.output.strip() == "📋 No memories match"


def test_list_text_keeps_memories_holding_every_word_typos_tolerated(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("cognitive_memory.main.model_encoder", lambda settings: HashEncoder())
    wanted = stored_id("Rotate the staging TLS certificate every sixty days.")
    stored_id("Staging runs on three nodes behind one load balancer.")

    found = json.loads(runner.invoke(app, ["list", "--text", "roatte certifcate", "--json"]).output)
    wordless = runner.invoke(app, ["list", "--text", "?!"])

    assert [m["id"] for m in found["memories"]] == [wanted]
    assert wordless.exit_code == 1 and wordless.output.startswith("Error: `text` '?!' holds no word")


def test_list_pages_on_with_its_cursor_after_writes_between_pages(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("cognitive_memory.main.model_encoder", lambda settings: HashEncoder())
    ids = [
        stored_id(f"Onboarding step {n}: {word}.")
        for n, word in enumerate(["laptop", "vpn", "repo", "ci", "pager"])
    ]
    first = json.loads(runner.invoke(app, ["list", "--limit", "2", "--json"]).output)

    stored_id("A memory stored between the pages.")
    assert runner.invoke(app, ["forget", ids[2]]).exit_code == 0
    assert runner.invoke(app, ["update", ids[1], "--importance", "0.9"]).exit_code == 0
    rest = json.loads(
        runner.invoke(app, ["list", "--limit", "2", "--cursor", first["next_cursor"], "--json"]).output
    )

    assert [m["id"] for m in first["memories"]] == [ids[4], ids[3]]
    assert [m["id"] for m in rest["memories"]] == [ids[1], ids[0]]
    assert (rest["total"], rest["next_cursor"]) == (5, None)


def test_list_refuses_a_bad_cursor_order_date_or_limit_in_one_line(data_dir: Path) -> None:
    garbled = runner.invoke(app, ["list", "--cursor", "not-a-cursor"])
    order = runner.invoke(app, ["list", "--order-by", "random"])
    date = runner.invoke(app, ["list", "--after", "2024-13-45"])
    limit = runner.invoke(app, ["list", "--limit", "101"])

    assert garbled.exit_code == 1
    assert (
        garbled.output.startswith("Error: `cursor` is not a cursor") and "without a cursor" in garbled.output
    )
    assert order.exit_code == 1 and "created, last_accessed, importance, access_count" in order.output
    assert date.exit_code == 1 and date.output.startswith("Error: created_after '2024-13-45'")
    assert limit.exit_code == 2


def test_a_turn_stored_with_speaker_keeps_it_as_a_column_and_shows_it_in_metadata(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("cognitive_memory.main.model_encoder", lambda settings: HashEncoder())
    memory_id = stored_id("Ada: shall we ship on Friday?", "--speaker", "Ada")

    shown = runner.invoke(app, ["get", memory_id, "--json"])

    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["memories"][0]["metadata"] == {"speaker": "Ada"}
    with closing(sqlite3.connect(data_dir / "cognitive_memory.db")) as conn:
        row = conn.execute("SELECT speaker, metadata FROM memories WHERE id = ?", (memory_id,)).fetchone()
    assert row == ("Ada", "{}")


def test_a_dry_run_of_store_says_nothing_was_stored_and_gives_no_time_it_was(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("cognitive_memory.main.model_encoder", lambda settings: HashEncoder())

    planned = runner.invoke(app, ["store", "Indent with spaces.", "--dry-run"])
    stored = runner.invoke(app, ["store", "Indent with spaces."])

    assert planned.exit_code == 0 and planned.output.startswith("✓ Dry run, nothing stored")
    assert "Stored At" not in planned.output and "Stored At: " in stored.output


def test_store_under_a_key_updates_it_and_get_reads_it_by_key(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("cognitive_memory.main.model_encoder", lambda settings: HashEncoder())
    first = stored_id("Indent with tabs.", "--key", "coding-style", "--importance", "0.9")
    planned = runner.invoke(
        app, ["store", "Indent with spaces.", "--key", "Coding-Style", "--dry-run", "--json"]
    )
    second = runner.invoke(app, ["store", "Indent with spaces.", "--key", "coding-style", "--json"])

    read = runner.invoke(app, ["get", "--key", "CODING-STYLE", "--history", "--json"])
    nothing = runner.invoke(app, ["get"])

    assert planned.exit_code == 0 and json.loads(planned.output)["updated"] is True
    assert json.loads(second.output)["memory_id"] == first and json.loads(second.output)["updated"]
    (record,) = json.loads(read.output)["memories"]
    assert (record["id"], record["content"], record["importance_score"]) == (
        first,
        "Indent with spaces.",
        0.9,
    )
    assert [version["content"] for version in record["history"]] == ["Indent with tabs."]
    assert nothing.exit_code == 1 and "Give memory ids or keys" in nothing.output


def test_list_keeps_to_a_session(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("cognitive_memory.main.model_encoder", lambda settings: HashEncoder())
    stored_id("Stored in the nightly run.", "--session", "nightly-7")
    stored_id("Stored by hand.")

    page = runner.invoke(app, ["list", "--session", "nightly-7", "--json"])
    bad = runner.invoke(app, ["list", "--session", "two words"])

    assert [m["content"] for m in json.loads(page.output)["memories"]] == ["Stored in the nightly run."]
    assert bad.exit_code == 1 and bad.output.startswith("Error: session")


def test_commands_take_the_short_ids_a_brief_recall_prints(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("cognitive_memory.main.model_encoder", lambda settings: HashEncoder())
    memory_id = stored_id("The ingest workers scale to eight when the queue backs up.")
    recalled = json.loads(runner.invoke(app, ["recall", "ingest workers queue", "--json"]).output)
    (short,) = [m["id"] for m in recalled["memories"]["core"]]

    shown = runner.invoke(app, ["get", short, "--json"])
    forgotten = runner.invoke(app, ["forget", short])

    assert short == memory_id[:SHORT_ID_CHARS]
    assert json.loads(shown.output)["memories"][0]["id"] == memory_id
    assert forgotten.exit_code == 0 and "Forgot 1 of 1 memories" in forgotten.output
    restored = runner.invoke(app, ["trash", "restore", short, "--json"])  # looked up in the trash
    assert restored.exit_code == 0, restored.output
    assert json.loads(runner.invoke(app, ["get", short, "--json"]).output)["memories"][0]["id"] == memory_id


def test_update_gives_and_removes_a_key(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("cognitive_memory.main.model_encoder", lambda settings: HashEncoder())
    memory_id = stored_id("Deploys freeze on Fridays.")

    given = runner.invoke(app, ["update", memory_id, "--key", "deploy-freeze", "--json"])
    read = runner.invoke(app, ["get", "--key", "deploy-freeze", "--json"])
    removed = runner.invoke(app, ["update", memory_id, "--key", "", "--json"])
    gone = runner.invoke(app, ["get", "--key", "deploy-freeze"])

    assert given.exit_code == 0 and json.loads(given.output)["changed"] == ["key"]
    assert [m["id"] for m in json.loads(read.output)["memories"]] == [memory_id]
    assert json.loads(removed.output)["changed"] == ["key"] and gone.exit_code == 3


def test_list_overview_prints_the_tags_in_use_and_the_sessions(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("cognitive_memory.main.model_encoder", lambda settings: HashEncoder())
    stored_id("Stored in the nightly run.", "--session", "nightly-7", "--tag", "ops")
    stored_id("Also nightly.", "--session", "nightly-7", "--tag", "ops", "--tag", "db")
    stored_id("Stored by hand.", "--session", "by-hand")

    shown = runner.invoke(app, ["list", "--overview", "--in-project", "*"])
    body = json.loads(runner.invoke(app, ["list", "--overview", "--json"]).output)["overview"]

    assert shown.exit_code == 0, shown.output
    assert "🏷️ Tags, most used first: ops (2), db (1)" in shown.output
    assert "1 memory without a tag" in shown.output
    assert "nightly-7: 2 memories" in shown.output and "by-hand: 1 memory" in shown.output
    assert [s["session"] for s in body["sessions"]] == ["by-hand", "nightly-7"]
