"""The files the embedded index keeps beside its shard (the count of unindexed points, Edge's
configuration): one that is not a regular file is read as absent, with a warning, never waited on."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from cognitive_memory.errors import StorageError
from cognitive_memory.index.edge_layout import stored_config
from cognitive_memory.index.edge_store import EdgeVectorStore
from cognitive_memory.index.edge_unindexed import UnindexedPoints
from tests.blocking import ends_within
from tests.hooking import fifo


def test_a_fifo_as_the_unindexed_count_counts_none(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with fifo(tmp_path / ".vectors.unindexed") as path:
        points = ends_within(5, lambda: UnindexedPoints(tmp_path / "vectors"), [path])
    assert points.count() == 0
    assert f"Ignoring {path}: it is a FIFO (named pipe)" in caplog.text


def test_a_saved_unindexed_count_is_read_back(tmp_path: Path) -> None:
    (tmp_path / ".vectors.unindexed").write_text("42\n")
    assert UnindexedPoints(tmp_path / "vectors").count() == 42


def test_a_fifo_as_edge_config_reads_as_none(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    with fifo(tmp_path / "edge_config.json") as path:
        assert ends_within(5, lambda: stored_config(tmp_path), [path]) == {}
    assert f"Ignoring {path}: it is a FIFO (named pipe)" in caplog.text


def test_a_fifo_as_the_shards_lock_file_is_refused_at_once_saying_what_to_do(tmp_path: Path) -> None:
    with fifo(tmp_path / ".vectors.lock") as path, pytest.raises(StorageError, match="is a FIFO") as refused:
        ends_within(5, lambda: EdgeVectorStore(tmp_path / "vectors", 8), [path])
    assert refused.value.code == "lock_file"
    assert "Remove it and try again" in refused.value.message


def test_the_unindexed_count_is_saved_over_a_fifo_without_opening_it(tmp_path: Path) -> None:
    points = UnindexedPoints(tmp_path / "vectors")
    points.wrote(["a", "b"])
    with fifo(tmp_path / ".vectors.unindexed") as path, fifo(tmp_path / ".vectors.unindexed.partial") as old:
        ends_within(5, points.save, [path, old])
        assert path.read_text() == "2\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".vectors.unindexed.")] == [old.name]
