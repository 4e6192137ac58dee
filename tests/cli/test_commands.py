"""The typer CLI through its runner: help, store, recall, status and clear failures."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cognitive_memory import main
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.index import EdgeVectorStore
from cognitive_memory.service import SHORT_ID_CHARS
from memory_system.cli import app

runner = CliRunner()

HEAVY_MODULES = ("torch", "sentence_transformers", "mcp", "qdrant_client", "qdrant_edge", "numpy")


def test_help_lists_the_commands() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("serve", "status", "store", "recall", "forget"):
        assert command in result.output
    serve = runner.invoke(app, ["serve", "--help"])
    assert serve.exit_code == 0 and "mcp" in serve.output


@pytest.mark.model
def test_forget_removes_a_memory_and_exits_3_when_an_id_is_unknown(data_dir: Path) -> None:
    stored = runner.invoke(app, ["store", "The VPN gateway lives in rack 12.", "--json"])
    memory_id = json.loads(stored.output)["memory_id"]

    forgotten = runner.invoke(app, ["forget", memory_id])
    again = runner.invoke(app, ["forget", memory_id, "--json"])

    assert forgotten.exit_code == 0, forgotten.output
    assert forgotten.output.splitlines()[:2] == ["✓ Forgot 1 of 1 memories", f"Forgotten: {memory_id}"]
    assert again.exit_code == 3
    assert json.loads(again.output)["missing"] == [memory_id]
    status = json.loads(runner.invoke(app, ["status", "--json"]).output)
    assert status["memory_counts"]["total_memories"] == 0


@pytest.mark.model
def test_recall_filters_by_tag_and_refuses_an_unknown_type(data_dir: Path) -> None:
    runner.invoke(app, ["store", "Rotate the staging TLS certificate every sixty days.", "--tag", "ops"])
    runner.invoke(
        app, ["store", "The staging TLS certificate renewal failed last night.", "--tag", "incident"]
    )

    ops = runner.invoke(app, ["recall", "staging certificate", "--tag", "ops", "--json"])
    wrong = runner.invoke(app, ["recall", "staging certificate", "--type", "procedural"])

    assert ops.exit_code == 0, ops.output
    lists = json.loads(ops.output)["memories"]
    assert [m["tags"] for m in lists["core"] + lists["peripheral"] + lists["bridge"]] == [["ops"]]
    assert wrong.exit_code == 1
    assert "Error: memory_types 'procedural': Input should be 'episodic' or 'semantic'" in wrong.output


@pytest.mark.subprocess
def test_help_imports_nothing_heavy() -> None:
    probe = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from memory_system.cli import app\n"
        "assert CliRunner().invoke(app, ['--help']).exit_code == 0\n"
        f"print([m for m in {HEAVY_MODULES!r} if m in sys.modules])\n"
    )
    output = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert output.stdout.strip() == "[]"


@pytest.mark.subprocess
def test_a_command_on_the_sqlite_store_never_imports_the_postgresql_driver(data_dir: Path) -> None:
    """psycopg costs 0.1-0.2 s to import: only a store on a server loads it."""
    probe = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from memory_system.cli import app\n"
        "result = CliRunner().invoke(app, ['status', '--json'])\n"
        "assert result.exit_code == 0, result.output\n"
        "print([m for m in ('psycopg', 'psycopg_pool') if m in sys.modules])\n"
    )
    output = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert output.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.model
def test_store_then_recall_then_status_with_the_real_model(data_dir: Path) -> None:
    stored = runner.invoke(
        app,
        ["store", "Our Postgres backups run at 02:00 UTC from the ops cron host.", "--tag", "ops", "--json"],
    )
    assert stored.exit_code == 0, stored.output
    memory_id = json.loads(stored.output)["memory_id"]
    recalled = runner.invoke(app, ["recall", "when do our Postgres backups run?", "--json"])
    assert recalled.exit_code == 0, recalled.output
    brief = json.loads(recalled.output)
    assert brief["detail"] == "brief" and brief["memories"]["core"][0]["id"] == memory_id[:SHORT_ID_CHARS]
    assert brief["memories"]["core"][0]["tags"] == ["ops"] and "score" in brief["memories"]["core"][0]
    text = runner.invoke(app, ["recall", "Postgres backups"])
    assert f"1. [core] {memory_id[:SHORT_ID_CHARS]} · score " in text.output
    assert "\n   Our Postgres backups run at 02:00 UTC from the ops cron host." in text.output
    full = runner.invoke(app, ["recall", "Postgres backups", "--detail", "full", "--json"])
    record = json.loads(full.output)["memories"]["core"][0]
    assert record["score"]["evidence"] > 0 and record["source_info"] == "💭 Manual Entry"
    assert "modified_date" not in record  # null, so left out
    status = runner.invoke(app, ["status", "--json"])
    assert status.exit_code == 0
    body = json.loads(status.output)
    assert body["memory_counts"]["total_memories"] == 1
    assert body["storage_stats"]["database_path"] == str(data_dir / "cognitive_memory.db")


def test_store_of_blank_text_fails_with_one_line_and_stores_nothing() -> None:
    result = runner.invoke(app, ["store", "   "])
    assert result.exit_code == 1
    assert result.output.strip() == "Error: `text` is empty: give the text to use."
    status = runner.invoke(app, ["status", "--json"])
    assert json.loads(status.output)["memory_counts"]["total_memories"] == 0


@pytest.mark.slow
def test_a_store_held_by_a_process_that_does_not_serve_it_is_refused_clearly(data_dir: Path) -> None:
    holder = EdgeVectorStore(data_dir / "vectors")
    try:
        result = runner.invoke(app, ["status"])
    finally:
        holder.close()
    assert result.exit_code == 1
    assert "held by another process that does not answer" in result.output
    assert "Traceback" not in result.output


def test_db_path_variable_moves_the_sqlite_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "elsewhere" / "memories.db"
    monkeypatch.setenv("COGNITIVE_MEMORY_DB_PATH", str(db))
    result = runner.invoke(app, ["status", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["storage_stats"]["database_path"] == str(db)
    assert db.exists()


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("COGNITIVE_MEMORY_ENCODER", "bogus", "Input should be 'onnx' or 'torch'"),
        ("MCP_SESSION_LESSON_BOOST", "9", "less than or equal to 3"),
        ("COGNITIVE_MEMORY_TORCH_THREADS", "abc", "valid integer"),
        ("MCP_MAX_MEMORIES_PER_QUERY", "0", "greater than or equal to 1"),
        ("COGNITIVE_MEMORY_NEAR_DUPLICATE", "2", "less than or equal to 1"),
        ("COGNITIVE_MEMORY_WORDS", "sparse", "Input should be 'index' or 'fts5'"),
    ],
)
@pytest.mark.parametrize("command", [["status"], ["serve", "mcp"], ["recall", "x"]])
def test_a_bad_setting_is_one_line_naming_the_variable_and_value(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, said: str, command: list[str]
) -> None:
    monkeypatch.setenv(variable, value)
    handlers = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}

    try:
        result = runner.invoke(app, command)
    finally:  # `serve mcp` takes over the signals of the process it runs in: this one's test runner
        for signum, handler in handlers.items():
            signal.signal(signum, handler)

    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: Invalid setting {variable}={value!r}: ")
    assert said in lines[0] and "Traceback" not in result.output


def test_setting_values_in_capitals_are_read_in_any_case(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_SERVER_MODE", "HTTP")
    monkeypatch.setenv("COGNITIVE_MEMORY_ENCODER", "ONNX")

    from cognitive_memory.settings import Settings

    settings = Settings(env_file=None)

    assert (settings.server.mode, settings.encoder.backend) == ("http", "onnx")


def test_a_blank_data_directory_is_the_users_not_the_current_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A client config's "COGNITIVE_MEMORY_DATA_DIR": "" put a store in each directory it started in.
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", " ")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    here = tmp_path / "somewhere"
    here.mkdir()
    monkeypatch.chdir(here)

    shown = runner.invoke(app, ["status", "--json"])

    assert shown.exit_code == 0, shown.output
    assert (tmp_path / "xdg" / "cognitive-memory" / "cognitive_memory.db").is_file()
    assert list(here.iterdir()) == []


@pytest.mark.parametrize("under", ["", "sub/dir"])
def test_a_data_directory_that_is_a_file_is_named_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, under: str
) -> None:
    # Every command said "[Errno 17] File exists: '...'".
    blocker = tmp_path / "afile"
    blocker.write_text("hi\n")
    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", str(blocker / under))

    shown = runner.invoke(app, ["status"])

    assert shown.exit_code == 1
    assert f"{blocker} is a file, not a directory. Point COGNITIVE_MEMORY_DATA_DIR" in shown.stderr
    assert blocker.read_text() == "hi\n"


@pytest.mark.subprocess
def test_a_read_only_data_directory_is_named_with_a_way_out(data_dir: Path) -> None:
    # Every command said "attempt to write a readonly database".
    created = runner.invoke(app, ["status"])
    assert created.exit_code == 0, created.output
    data_dir.chmod(0o500)
    command = [sys.executable, "-c", "from memory_system.cli import main; main()", "status"]
    if os.geteuid() == 0:  # root writes anywhere: run without the capabilities that allow it
        if shutil.which("setpriv") is None:
            pytest.skip("root without setpriv")
        drop = "-dac_override,-dac_read_search"
        command = ["setpriv", "--bounding-set", drop, "--inh-caps", drop, *command]
    try:
        shown = subprocess.run(command, capture_output=True, text=True, timeout=120)
    finally:
        data_dir.chmod(0o700)

    assert shown.returncode == 1
    assert f"{data_dir} is not writable" in shown.stderr
    assert "copy the directory somewhere writable" in shown.stderr


def test_a_relative_data_directory_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cognitive_memory.settings import Settings

    monkeypatch.setenv("COGNITIVE_MEMORY_DATA_DIR", "memories")
    monkeypatch.chdir(tmp_path)

    assert Settings(env_file=None).storage.data_dir == tmp_path / "memories"


def test_the_log_level_is_read_from_the_env_file_too(tmp_path: Path) -> None:
    from cognitive_memory.settings import Settings

    env_file = tmp_path / ".env"
    env_file.write_text("COGNITIVE_MEMORY_LOG_LEVEL=warning\n")

    assert Settings(env_file=env_file).server.log_level == "WARNING"


@pytest.mark.model
def test_store_dash_reads_the_text_from_stdin() -> None:
    stored = runner.invoke(app, ["store", "-", "--json"], input="The nightly job writes to s3://backups.\n")

    assert stored.exit_code == 0, stored.output
    memory_id = json.loads(stored.output)["memory_id"]
    shown = runner.invoke(app, ["get", memory_id, "--json"])
    assert json.loads(shown.output)["memories"][0]["content"] == "The nightly job writes to s3://backups."


def test_a_dry_run_store_of_a_close_text_names_its_nearest_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(main, "model_encoder", lambda settings: HashEncoder())
    kept = runner.invoke(app, ["store", "The staging database password rotates monthly.", "--json"])
    memory_id = json.loads(kept.output)["memory_id"]

    planned = runner.invoke(app, ["store", "The staging database password rotates weekly.", "--dry-run"])

    assert planned.exit_code == 0, planned.output
    assert f"it would be stored as a new memory; memory {memory_id} is close (cosine 0.83)" in planned.output
    assert f"Nearest Memory: {memory_id} (0.83): The staging database password rotates monthly." in (
        planned.output
    )


@pytest.mark.subprocess
def test_store_dash_reads_no_more_of_an_endless_stdin_than_a_memory_holds(data_dir: Path) -> None:
    # `store - < /dev/zero` read it all: 10 GB in 15 s, then a MemoryError traceback.
    def small_address_space() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))

    with open("/dev/zero", "rb") as endless:
        ended = subprocess.run(
            [sys.executable, "-c", "from memory_system.cli import main; main()", "store", "-"],
            stdin=endless,
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=small_address_space,
        )

    assert ended.returncode == 1
    refusal = "Error: The text on stdin is over 100,000 characters, the most a memory holds."
    assert ended.stderr.strip() == refusal
    assert not (data_dir / "cognitive_memory.db").exists()


@pytest.mark.model
def test_recall_keeps_to_the_configured_most_results(monkeypatch: pytest.MonkeyPatch) -> None:
    refused = runner.invoke(app, ["recall", "anything", "--max-results", "51"])
    monkeypatch.setenv("MCP_MAX_MEMORIES_PER_QUERY", "100")
    allowed = runner.invoke(app, ["recall", "anything", "--max-results", "51"])

    assert refused.exit_code == 1
    assert refused.output.strip() == "Error: --max-results is 51; at most 50 (MCP_MAX_MEMORIES_PER_QUERY)."
    assert allowed.exit_code == 0, allowed.output


def test_recall_caps_its_default_to_the_configured_most_results_quietly(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(main, "model_encoder", lambda settings: HashEncoder())
    monkeypatch.setenv("MCP_MAX_MEMORIES_PER_QUERY", "3")
    for replica in range(5):
        assert (
            runner.invoke(app, ["store", f"The database replica {replica} runs in rack {replica}."]).exit_code
            == 0
        )

    recalled = runner.invoke(app, ["recall", "database", "--no-bridges", "--json"])
    refused = runner.invoke(app, ["recall", "database", "--max-results", "4"])

    assert recalled.exit_code == 0, recalled.output
    memories = json.loads(recalled.output)["memories"]
    assert 0 < sum(len(found) for found in memories.values()) <= 3
    assert refused.exit_code == 1
    assert refused.output.strip() == "Error: --max-results is 4; at most 3 (MCP_MAX_MEMORIES_PER_QUERY)."


def test_recall_explain_says_why_a_named_memory_was_not_returned(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(main, "model_encoder", lambda settings: HashEncoder())
    runner.invoke(app, ["store", "The staging cluster certificate expires in March.", "--tag", "ops"])
    stored = runner.invoke(app, ["store", "The staging cluster runs four nodes.", "--tag", "infra", "--json"])
    memory_id = json.loads(stored.output)["memory_id"]

    as_json = runner.invoke(
        app, ["recall", "staging cluster", "--tag", "ops", "--explain", memory_id[:8], "--json"]
    )
    text = runner.invoke(app, ["recall", "staging cluster", "--tag", "ops", "--explain", memory_id[:8]])
    too_many = runner.invoke(app, ["recall", "staging cluster", *[f"--explain=id{n}" for n in range(11)]])

    assert as_json.exit_code == 0, as_json.output
    [item] = json.loads(as_json.output)["explained"]
    assert item["id"] == memory_id[:8] and item["reason"] == "filtered" and item["filters"] == ["tags"]
    assert item["score"]["similarity"] > 0
    assert f"- {memory_id[:8]}: filtered, score " in text.output
    assert "   Left out by the filters: tags." in text.output
    assert too_many.exit_code == 1
    assert "at most 10 per recall" in too_many.output
