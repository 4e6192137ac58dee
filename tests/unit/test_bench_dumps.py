"""bench/dumps.py: ranking dumps compare equal only when every ranking and score is the same."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from bench import dumps


def _dump(path: Path, *rankings: list[tuple[str, float]]) -> Path:
    dumps.write(path, [dumps.question_line(f"q{i}", ranked) for i, ranked in enumerate(rankings)])
    return path


def test_the_same_rankings_compare_identical(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _dump(tmp_path / "a.jsonl", [("D1:1", 0.5), ("D1:2", 0.25)], [("D2:1", 1.0)])
    b = _dump(tmp_path / "b.jsonl", [("D1:1", 0.5000000001), ("D1:2", 0.25)], [("D2:1", 1.0)])
    dumps.main([str(a), str(b)])
    assert capsys.readouterr().out == "0 of 2 questions differ\n"


def test_an_order_a_score_or_a_missing_question_is_a_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _dump(tmp_path / "a.jsonl", [("D1:1", 0.5), ("D1:2", 0.25)], [("D2:1", 1.0)], [("D3:1", 1.0)])
    b = _dump(tmp_path / "b.jsonl", [("D1:2", 0.5), ("D1:1", 0.25)], [("D2:1", 0.9)])
    with pytest.raises(SystemExit) as exited:
        dumps.main([str(a), str(b)])
    assert exited.value.code == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "3 of 3 questions differ"
    assert out[1].startswith("  q0: ranking differs from rank 1")
    assert out[2] == "  q1: score of D2:1 (rank 1) differs: 1.0 vs 0.9"
    assert out[3].startswith("  q2: only in")
    assert dumps.compare(a, b, tolerance=0.2)[1:] == [out[3].strip()]


def test_repeatable_ids_draw_the_same_ids_each_time_then_give_uuid4_back() -> None:
    real = uuid.uuid4
    with dumps.repeatable_ids():
        first = [uuid.uuid4() for _ in range(3)]
    with dumps.repeatable_ids():
        second = [uuid.uuid4() for _ in range(3)]
    assert first == second
    assert len(set(first)) == 3
    assert all(u.version == 4 for u in first)
    assert uuid.uuid4 is real
