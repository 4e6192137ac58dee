"""Scratch files of ONNX exports whose process ended are removed by the next export."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cognitive_memory.encoding.onnx_export import remove_abandoned_exports


@pytest.mark.subprocess
def test_scratch_files_of_ended_exports_go_and_a_running_one_s_stays(tmp_path: Path) -> None:
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    gone_pid = int(ended.stdout)
    abandoned = tmp_path / f".export-{gone_pid}-a1b2.onnx"
    legacy = tmp_path / ".export-k3j4h5.onnx"
    running = tmp_path / f".export-{os.getpid()}-c3d4.onnx"
    model = tmp_path / "model.onnx"
    for path in (abandoned, legacy, running, model):
        path.write_bytes(b"")

    remove_abandoned_exports(tmp_path)

    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([running.name, model.name])
