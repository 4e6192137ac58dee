"""The files the embedded index keeps beside its shard (the count of unindexed points, Edge's
configuration): one that is not a regular file is read as absent, with a warning, never waited on."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from cognitive_memory.index.edge_layout import stored_config
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
