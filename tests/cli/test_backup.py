"""memory_system backup and restore: snapshots while others write, checks, forks, crash safety."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from contextlib import closing
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cognitive_memory import linking
from cognitive_memory.backup.restore import restore_snapshot
from cognitive_memory.backup.snapshot import (
    DATABASE_NAME,
    PARTIAL_MARK,
    create_snapshot,
    list_snapshots,
    verify_snapshot,
)
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.errors import InvalidInputError, StorageError
from cognitive_memory.index import EdgeVectorStore, VectorStore
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from cognitive_memory.storage import SQLiteMemoryStore
from memory_system.cli import app
from tests.aging import make_old_store

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from memory_system.cli import main; main()"]


def _fill(count: int = 12) -> list[str]:
    """Memories with tags and typed links in the configured data directory; their ids."""
    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        ids = [
            system.store(
                f"Fact {n}: the {n}th service listens on port {8000 + n}.",
                tags=[f"svc{n % 3}"],
                key=f"port-{n}",
                session_id=f"filler-{n % 2}",
            ).memory.id
            for n in range(count)
        ]
        if count >= 3:
            linking.link(system.records, ids[0], ids[1], "relates_to", note="same rack", weight=0.3)
            linking.link(system.records, ids[2], ids[1], "supersedes")
    finally:
        system.close()
    return ids


def _rows(database: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    with closing(sqlite3.connect(database)) as conn:
        memories = conn.execute(
            "SELECT id, content, tags, project, memory_key, session_id, embedding FROM memories ORDER BY id"
        ).fetchall()
        links = conn.execute(
            "SELECT from_id, to_id, relation, note, weight FROM relations ORDER BY 1, 2"
        ).fetchall()
    return memories, links


def _memory_count(database: Path) -> int:
    with closing(sqlite3.connect(database)) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0])


def _queued(database: Path) -> set[str]:
    with closing(sqlite3.connect(database)) as conn:
        return {
            row[0] for row in conn.execute("SELECT memory_id FROM vector_outbox WHERE operation = 'upsert'")
        }


def _backup(*args: str) -> dict[str, object]:
    result = runner.invoke(app, ["backup", *args, "--json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    made: dict[str, object] = {**body["snapshot"], "deleted": body.get("deleted")}
    return made


def test_restore_into_a_fresh_directory_holds_every_memory_tag_and_link_and_recall_works(
    data_dir: Path, tmp_path: Path
) -> None:
    ids = _fill()
    snapshot = Path(str(_backup()["path"]))
    fork = tmp_path / "fork"

    result = runner.invoke(app, ["restore", snapshot.name, "--to", str(fork)])

    assert result.exit_code == 0, result.output
    assert f"Restored {len(ids)} memories" in result.stdout
    assert _rows(fork / DATABASE_NAME) == _rows(data_dir / DATABASE_NAME)
    vectors = EdgeVectorStore(fork / "vectors")
    try:
        assert sorted(vectors.ids()) == sorted(ids)
    finally:
        vectors.close()
    settings = Settings(env_file=None)
    settings.storage.data_dir = fork
    system = build_system(settings, encoder=HashEncoder())
    try:
        found = system.retrieve("Fact 7: the 7th service listens on port 8007.", include_bridges=False)
        assert found.core[0].memory.id == ids[7]
        assert system.records.outbox.pending() == []
    finally:
        system.close()


def test_restoring_a_snapshot_of_an_older_store_puts_every_memorys_words_in_the_index(
    data_dir: Path, tmp_path: Path
) -> None:
    ids = make_old_store()
    snapshot = Path(str(_backup()["path"]))
    fork = tmp_path / "fork"

    result = runner.invoke(app, ["restore", snapshot.name, "--to", str(fork)])

    assert result.exit_code == 0, result.output
    settings = Settings(env_file=None)
    settings.storage.data_dir = fork
    system = build_system(settings, encoder=HashEncoder())
    try:
        assert system.status().words_index is None
        assert system.records.words.in_index()
        assert len(system.vectors.ids()) == len(ids)
    finally:
        system.close()


@pytest.mark.subprocess
def test_backup_while_another_process_stores_holds_everything_acknowledged_before_it(data_dir: Path) -> None:
    writer_code = (
        "import sys\n"
        "from cognitive_memory.encoding import HashEncoder\n"
        "from cognitive_memory.main import build_system\n"
        "from cognitive_memory.settings import Settings\n"
        "system = build_system(Settings(env_file=None), encoder=HashEncoder())\n"
        "for n in range(400):\n"
        "    print(system.store(f'written while backing up, number {n}').memory.id, flush=True)\n"
        "system.close()\n"
    )
    writer = subprocess.Popen(
        [sys.executable, "-c", writer_code], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    acknowledged: list[str] = []
    enough = threading.Event()

    def read() -> None:
        assert writer.stdout is not None
        for line in writer.stdout:
            acknowledged.append(line.strip())
            if len(acknowledged) >= 20:
                enough.set()
        enough.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert enough.wait(120)
    before = list(acknowledged)
    backup = subprocess.run([*CLI, "backup", "--json"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    still_writing = writer.poll() is None
    writer.wait(timeout=120)
    reader.join(timeout=10)
    assert writer.stdout is not None
    writer.stdout.close()

    assert backup.returncode == 0, backup.stderr
    snapshot = verify_snapshot(Path(json.loads(backup.stdout)["snapshot"]["path"]))
    with closing(sqlite3.connect(snapshot.database)) as conn:
        held = {row[0] for row in conn.execute("SELECT id FROM memories")}
    assert set(before) <= held
    assert len(held) == snapshot.manifest.counts["memories"]
    if still_writing:  # the writer went on after the snapshot: it kept nothing half-written
        assert len(held) < len(acknowledged)


def test_restore_refuses_a_directory_holding_memories_unless_forced_and_backs_it_up_first(
    data_dir: Path,
) -> None:
    _fill(3)
    _backup("--name", "three")
    _fill(6)  # three more: the first three are duplicates, not stored again
    now = _rows(data_dir / DATABASE_NAME)

    refused = runner.invoke(app, ["restore", "three"])
    assert refused.exit_code == 1
    assert "already holds 6 memories" in refused.stderr and "--force" in refused.stderr
    assert _rows(data_dir / DATABASE_NAME) == now

    forced = runner.invoke(app, ["restore", "three", "--force", "--json"])
    assert forced.exit_code == 0, forced.output
    body = json.loads(forced.stdout)
    assert body["memories"] == 3
    safety = verify_snapshot(Path(body["safety_snapshot"]))
    assert safety.manifest.name == "before-restore"
    assert _rows(safety.database) == now
    assert _memory_count(data_dir / DATABASE_NAME) == 3


def test_restore_over_a_damaged_database_sets_it_aside_when_forced_and_keeps_its_bytes(
    data_dir: Path,
) -> None:
    _fill(3)
    snapshot = _backup()["path"]
    damaged = b"SQLite format 3\x00" + bytes(range(256)) * 20  # a header, then garbage
    (data_dir / DATABASE_NAME).write_bytes(damaged)

    refused = runner.invoke(app, ["restore", str(snapshot)])
    assert refused.exit_code == 1 and refused.stderr.count("Error:") == 1, refused.output
    assert "cannot be read" in refused.stderr and "--force to set it aside" in refused.stderr
    assert (data_dir / DATABASE_NAME).read_bytes() == damaged

    forced = runner.invoke(app, ["restore", str(snapshot), "--force", "--json"])
    assert forced.exit_code == 0, forced.output
    body = json.loads(forced.stdout)
    assert body["memories"] == 3 and body["safety_snapshot"] is None
    aside = Path(body["damaged_set_aside"])
    assert aside.parent == data_dir and aside.name.startswith(f"{DATABASE_NAME}.damaged-")
    assert aside.read_bytes() == damaged
    assert _memory_count(data_dir / DATABASE_NAME) == 3


def test_restore_refuses_while_another_process_has_the_database_open(data_dir: Path) -> None:
    _fill(2)
    snapshot = _backup()["path"]
    server = SQLiteMemoryStore(data_dir / DATABASE_NAME)  # as a running server holds it
    try:
        result = runner.invoke(app, ["restore", str(snapshot), "--force"])
    finally:
        server.close()

    assert result.exit_code == 1
    assert "is open in another process" in result.stderr
    assert "Traceback" not in result.output


def test_a_snapshot_with_a_flipped_byte_is_refused_clearly(data_dir: Path, tmp_path: Path) -> None:
    _fill(4)
    snapshot = Path(str(_backup()["path"]))
    database = snapshot / DATABASE_NAME
    data = bytearray(database.read_bytes())
    data[len(data) // 2] ^= 0xFF
    database.write_bytes(bytes(data))

    result = runner.invoke(app, ["restore", str(snapshot), "--to", str(tmp_path / "fork")])

    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f"Error: {database} does not match its manifest's sha256: the snapshot is damaged."
    ]
    assert not (tmp_path / "fork" / DATABASE_NAME).exists()


def test_counts_that_disagree_with_the_manifest_are_refused(data_dir: Path) -> None:
    _fill(4)
    snapshot = Path(str(_backup()["path"]))
    manifest = json.loads((snapshot / "manifest.json").read_text())
    manifest["counts"]["memories"] = 5
    (snapshot / "manifest.json").write_text(json.dumps(manifest))

    with pytest.raises(InvalidInputError, match="its manifest says"):
        verify_snapshot(snapshot)


@pytest.mark.subprocess
def test_a_backup_killed_before_its_rename_leaves_no_snapshot_restore_accepts(
    data_dir: Path, tmp_path: Path
) -> None:
    _fill(3)
    destination = tmp_path / "snaps" / "killed"
    code = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from cognitive_memory.backup.snapshot import create_snapshot\n"
        "def step(text):\n"
        "    if 'sha256' in text:\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "create_snapshot(Path(sys.argv[1]), Path(sys.argv[2]), step=step)\n"
    )
    killed = subprocess.run(
        [sys.executable, "-c", code, str(data_dir / DATABASE_NAME), str(destination)], cwd=ROOT
    )

    assert killed.returncode == -signal.SIGKILL
    assert not destination.exists()
    partials = [p for p in destination.parent.iterdir() if PARTIAL_MARK in p.name]
    assert len(partials) == 1 and (partials[0] / DATABASE_NAME).exists()
    assert list_snapshots(destination.parent) == []
    refused = runner.invoke(app, ["restore", str(partials[0]), "--to", str(tmp_path / "fork")])
    assert refused.exit_code == 1 and "manifest.json is missing" in refused.stderr

    create_snapshot(data_dir / DATABASE_NAME, destination)  # the next backup there clears the debris
    assert [p.name for p in destination.parent.iterdir()] == ["killed"]


def test_keep_deletes_the_oldest_unnamed_snapshots_and_never_a_named_one(data_dir: Path) -> None:
    _fill(2)
    named = _backup("--name", "before-refactor")["path"]
    made = [_backup()["path"] for _ in range(3)]

    body = _backup("--keep", "2")

    remaining = [str(s.path) for s in list_snapshots(data_dir / "backups")]
    assert body["deleted"] == made[:2]
    assert remaining == [named, made[2], body["path"]]


def test_list_shows_each_snapshot_with_its_name_time_counts_and_size(data_dir: Path) -> None:
    _fill(2)
    _backup("--name", "before-refactor")
    _backup()

    text = runner.invoke(app, ["backup", "--list"])
    listed = json.loads(runner.invoke(app, ["backup", "--list", "--json"]).stdout)

    assert text.exit_code == 0
    assert "2 snapshot(s)" in text.stdout and "before-refactor" in text.stdout
    assert text.stdout.count("2 memories (0 links") == 2
    assert [s.get("name") for s in listed["snapshots"]] == ["before-refactor", None]
    assert all(s["size_bytes"] > 0 for s in listed["snapshots"])


def test_a_name_is_used_once_and_each_snapshot_says_how_to_restore_it(data_dir: Path) -> None:
    _fill(2)
    first = runner.invoke(app, ["backup", "--name", "weekly"])
    again = runner.invoke(app, ["backup", "--name", "weekly"])

    (snapshot,) = list_snapshots(data_dir / "backups")
    command = f"COGNITIVE_MEMORY_DATA_DIR={data_dir} memory_system restore {snapshot.path} --force"
    assert first.exit_code == 0, first.output
    assert first.stdout.startswith("✓ Snapshot 'weekly' made: 2 memories (0 links")
    assert f"Restore (stop every server using this memory first): {command}" in first.stdout
    assert again.exit_code == 1
    assert again.stderr.strip().splitlines()[-1] == (
        f"Error: A snapshot named 'weekly' already exists in {data_dir / 'backups'}: choose another name "
        "(the list shows the names taken)."
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["restore", "nothing-such"], "No snapshot 'nothing-such'"),
        (["backup", "--name", "../escape"], "Snapshot name '../escape' is not allowed"),
        (["backup", "."], "already exists and is not empty"),
    ],
)
def test_failures_are_one_error_line_and_exit_1(data_dir: Path, args: list[str], message: str) -> None:
    _fill(1)

    result = runner.invoke(app, args)

    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("Error: ") and message in lines[-1]
    assert "Traceback" not in result.output


def test_backup_of_a_data_directory_without_a_database_says_so(data_dir: Path) -> None:
    result = runner.invoke(app, ["backup"])

    assert result.exit_code == 1
    assert "nothing to back up" in result.stderr
    assert not os.path.exists(data_dir / "backups") or list_snapshots(data_dir / "backups") == []


def test_a_restore_interrupted_after_placing_the_database_heals_at_the_next_start(
    data_dir: Path, tmp_path: Path
) -> None:
    ids = _fill(5)
    snapshot = verify_snapshot(Path(str(_backup()["path"])))
    fork = tmp_path / "fork"

    def no_index() -> VectorStore:
        raise StorageError("killed before the index was rebuilt")

    with pytest.raises(StorageError):
        restore_snapshot(snapshot, fork / DATABASE_NAME, fork / "vectors", no_index)

    assert _queued(fork / DATABASE_NAME) == set(ids)
    settings = Settings(env_file=None)
    settings.storage.data_dir = fork
    system = build_system(settings, encoder=HashEncoder())
    try:
        assert system.vectors.count() == len(ids)
        assert system.records.outbox.pending() == []
    finally:
        system.close()
