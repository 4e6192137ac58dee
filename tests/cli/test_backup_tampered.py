"""memory_system restore against crafted snapshots: a database whose manifest hash was recomputed
after tampering is refused unless its schema and migrations are exactly what this version makes;
a FIFO in place of a snapshot's file is refused at once, never waited on."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from contextlib import closing
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cognitive_memory.backup.restore import restore_snapshot
from cognitive_memory.backup.snapshot import DATABASE_NAME, MANIFEST_NAME, create_snapshot, verify_snapshot
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.errors import InvalidInputError
from cognitive_memory.index import VectorStore
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from cognitive_memory.storage import migrations
from memory_system.cli import app
from tests.blocking import ends_within
from tests.hooking import fifo

runner = CliRunner()


def _fill(count: int) -> list[str]:
    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        return [
            system.store(f"Fact {n}: service {n} listens on port {8000 + n}.").memory.id for n in range(count)
        ]
    finally:
        system.close()


def _backup() -> Path:
    result = runner.invoke(app, ["backup", "--json"])
    assert result.exit_code == 0, result.output
    return Path(json.loads(result.stdout)["snapshot"]["path"])


def _tamper(snapshot: Path, sql: str) -> None:
    """Run ``sql`` on the snapshot's database, then rewrite the manifest's sha256 (and size) the
    way ``backup`` computes them, as an attacker who can write the snapshot would."""
    database = snapshot / DATABASE_NAME
    with closing(sqlite3.connect(database, isolation_level=None)) as conn:
        conn.executescript(sql)
    manifest = json.loads((snapshot / MANIFEST_NAME).read_text())
    manifest["sha256"] = hashlib.sha256(database.read_bytes()).hexdigest()
    manifest["database_bytes"] = database.stat().st_size
    (snapshot / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2))


def _dump(database: Path) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(database)) as conn:
        return conn.execute("SELECT id, content FROM memories ORDER BY id").fetchall()


def _refused(snapshot: Path, data_dir: Path, expected: str) -> None:
    """``restore --force`` answers one error line naming ``expected`` and changes nothing there."""
    before = _dump(data_dir / DATABASE_NAME)
    backups = sorted(p.name for p in (data_dir / "backups").iterdir())

    result = runner.invoke(app, ["restore", str(snapshot), "--force"])

    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert expected in lines[0]
    assert "Traceback" not in result.output
    assert _dump(data_dir / DATABASE_NAME) == before
    assert sorted(p.name for p in (data_dir / "backups").iterdir()) == backups  # no safety copy made


def test_a_snapshot_whose_trigger_deletes_stored_memories_is_refused(data_dir: Path) -> None:
    _fill(3)
    snapshot = _backup()
    cutoff = time.time()
    _tamper(
        snapshot,
        "CREATE TRIGGER vanish AFTER DELETE ON vector_outbox "
        f"WHEN (SELECT timestamp FROM memories WHERE id = OLD.memory_id) > {cutoff} "
        "BEGIN DELETE FROM memories WHERE id = OLD.memory_id; END;",
    )
    _fill(4)  # the store holds one more memory than the snapshot

    _refused(snapshot, data_dir, "trigger 'vanish' on vector_outbox")

    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        stored = system.store("Acknowledged after the attempted restore.").memory.id
        assert [m.id for m in system.records.memories.get([stored])] == [stored]
    finally:
        system.close()


def test_a_snapshot_recording_an_unknown_migration_is_refused(data_dir: Path) -> None:
    _fill(2)
    snapshot = _backup()
    _tamper(
        snapshot,
        "INSERT INTO schema_migrations (name, applied_at) VALUES ('0999_from_elsewhere', '2026-01-01');",
    )

    _refused(snapshot, data_dir, "migration '0999_from_elsewhere'")


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("CREATE VIEW everything AS SELECT * FROM memories;", "view 'everything'"),
        ("CREATE TABLE stash (x TEXT);", "table 'stash'"),
        ("CREATE INDEX memories_content ON memories (content);", "index 'memories_content'"),
        (
            "CREATE TRIGGER refill AFTER INSERT ON memories BEGIN UPDATE memories SET strength = 0; END;",
            "trigger 'refill' on memories",
        ),
        ("DROP INDEX memories_kinds;", "index 'memories_kinds' on memories is missing"),
        (
            "CREATE TABLE store_meta_x (key TEXT, value TEXT); INSERT INTO store_meta_x SELECT * FROM "
            "store_meta; DROP TABLE store_meta; ALTER TABLE store_meta_x RENAME TO store_meta;",
            "table 'store_meta' is defined differently",
        ),
        (
            "DELETE FROM schema_migrations WHERE name = '0003_sources_and_structure';",
            "0003_sources_and_structure",
        ),
    ],
)
def test_any_schema_the_migrations_do_not_make_is_refused(data_dir: Path, sql: str, expected: str) -> None:
    _fill(2)
    snapshot = _backup()
    _tamper(snapshot, sql)

    _refused(snapshot, data_dir, expected)


def test_manifest_migrations_that_disagree_with_the_database_are_refused(data_dir: Path) -> None:
    _fill(2)
    snapshot = _backup()
    manifest = json.loads((snapshot / MANIFEST_NAME).read_text())
    manifest["migrations"] = manifest["migrations"][:-1]
    (snapshot / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2))

    _refused(snapshot, data_dir, "its manifest says")


SPEAKER_COLUMNS = "0013_speaker_origin_columns"


def _old_store(path: Path, applied: int) -> None:
    """A store made by the first ``applied`` migrations, as an older version left it: a turn of a
    conversation, its speaker in metadata before the speaker column, in the column after it."""
    columns = applied > [name for name, _ in migrations.MIGRATIONS].index(SPEAKER_COLUMNS)
    path.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        migrations.apply_migrations(conn, applied)
        conn.execute(
            "INSERT INTO memories (id, content, hierarchy_level, memory_type, created_date, timestamp, "
            "access_count, importance_score, strength, metadata, tags, dimensions, embedding) VALUES "
            "('0c9f5a52-7d1e-4c1b-9a0e-3f1f2b6c8d10', 'An old fact.', 1, 'semantic', "
            "'2024-05-01T00:00:00+00:00', 1714521600, 0, 0.5, 1.0, ?, '[]', '{}', ?)",
            (
                "{}" if columns else '{"speaker": "Ada"}',
                HashEncoder().encode(["An old fact."])[0].astype("<f4").tobytes(),
            ),
        )
        if columns:
            conn.execute("UPDATE memories SET speaker = 'Ada'")
        if applied >= 2:
            conn.execute(
                "INSERT INTO memory_fts (rowid, content, context) SELECT rowid, content, '' FROM memories"
            )


@pytest.mark.parametrize("applied", [1, 5, 8, 12, len(migrations.MIGRATIONS)])
def test_a_snapshot_of_an_older_schema_restores_and_is_upgraded(
    data_dir: Path, tmp_path: Path, applied: int
) -> None:
    old = tmp_path / "old" / DATABASE_NAME
    _old_store(old, applied)
    snapshot = create_snapshot(old, tmp_path / "snapshot")
    fork = tmp_path / "fork"

    result = runner.invoke(app, ["restore", str(snapshot.path), "--to", str(fork)])

    assert result.exit_code == 0, result.output
    settings = Settings(env_file=None)
    settings.storage.data_dir = fork
    system = build_system(settings, encoder=HashEncoder())
    try:
        (memory,) = system.records.memories.get(["0c9f5a52-7d1e-4c1b-9a0e-3f1f2b6c8d10"])
        assert (memory.content, memory.speaker, dict(memory.metadata)) == ("An old fact.", "Ada", {})
    finally:
        system.close()
    with closing(sqlite3.connect(fork / DATABASE_NAME)) as conn:
        names = [row[0] for row in conn.execute("SELECT name FROM schema_migrations ORDER BY name")]
    assert names == [name for name, _ in migrations.MIGRATIONS]
    verify_snapshot(create_snapshot(fork / DATABASE_NAME, tmp_path / "upgraded").path)


def test_a_snapshot_swapped_after_its_check_is_refused_before_it_replaces_anything(
    data_dir: Path, tmp_path: Path
) -> None:
    _fill(2)
    snapshot = verify_snapshot(_backup())
    _tamper(snapshot.path, "CREATE TRIGGER late AFTER INSERT ON memories BEGIN DELETE FROM memories; END;")
    fork = tmp_path / "fork"

    def no_index() -> VectorStore:
        raise AssertionError("the index is never opened")

    with pytest.raises(InvalidInputError, match="changed after it was checked"):
        restore_snapshot(snapshot, fork / DATABASE_NAME, fork / "vectors", no_index)

    assert not (fork / DATABASE_NAME).exists()
    assert [p.name for p in fork.iterdir()] == []


@pytest.mark.parametrize("planted", [MANIFEST_NAME, DATABASE_NAME])
def test_a_fifo_in_place_of_a_snapshot_file_is_refused_at_once_and_left_out_of_the_list(
    data_dir: Path, planted: str
) -> None:
    _fill(2)
    kept, snapshot = _backup(), _backup()
    (snapshot / planted).unlink()
    with fifo(snapshot / planted) as path:
        ends_within(5, lambda: _refused(snapshot, data_dir, f"{planted} is a FIFO (named pipe)"), [path])
        listed = ends_within(5, lambda: runner.invoke(app, ["backup", "--list", "--json"]), [path])
    shown = [s["path"] for s in json.loads(listed.stdout)["snapshots"]]
    assert shown == ([str(kept)] if planted == MANIFEST_NAME else [str(kept), str(snapshot)])


def test_a_snapshot_database_swapped_for_a_fifo_after_its_check_is_refused_without_blocking(
    data_dir: Path, tmp_path: Path
) -> None:
    _fill(2)
    snapshot = verify_snapshot(_backup())
    snapshot.database.unlink()
    fork = tmp_path / "fork"

    def no_index() -> VectorStore:
        raise AssertionError("the index is never opened")

    with fifo(snapshot.database) as path, pytest.raises(InvalidInputError, match="now a FIFO"):
        ends_within(
            5, lambda: restore_snapshot(snapshot, fork / DATABASE_NAME, fork / "vectors", no_index), [path]
        )
    assert [p.name for p in fork.iterdir()] == []
