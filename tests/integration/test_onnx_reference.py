"""A damaged ONNX export (a few weights scaled) is caught by its reference vectors: the encoder
refuses it and embeds with torch, `doctor` fails its model check and `encoder status` says so."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cognitive_memory.encoding import OnnxEncoder, SentenceBertEncoder
from cognitive_memory.encoding.onnx_export import CHECK_TEXTS, MIN_COSINE, min_cosine
from cognitive_memory.encoding.onnx_model import REFERENCE_FILE, OnnxModel
from memory_system.cli import app

pytestmark = pytest.mark.model

runner = CliRunner()


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, real_encoder: SentenceBertEncoder) -> Path:
    """A cache directory holding a fresh, verified export (never modified by the tests)."""
    cache = tmp_path_factory.mktemp("cache")
    encoder = OnnxEncoder(real_encoder, cache)
    assert encoder.export() is not None
    assert encoder.export_file().with_name(REFERENCE_FILE).is_file()
    return cache


def _copy(cache: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "cache"
    shutil.copytree(cache, copy)
    return copy


def damage(onnx_file: Path, *, tensors: int = 3, share: float = 0.02, factor: float = 10.0) -> None:
    """Scale ``share`` of the weights of the ``tensors`` largest weight matrices after the embeddings."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(onnx_file))
    matrices = [t for t in graph.graph.initializer if len(t.dims) == 2 and "embeddings" not in t.name]
    rng = np.random.default_rng(7)
    for tensor in sorted(matrices, key=lambda t: -int(np.prod(t.dims)))[:tensors]:
        weights = numpy_helper.to_array(tensor).copy()
        chosen = rng.random(weights.shape) < share
        weights[chosen] *= factor
        tensor.CopyFrom(numpy_helper.from_array(weights, tensor.name))
    onnx.save(graph, str(onnx_file))


@pytest.fixture
def damaged(exported: Path, tmp_path: Path, real_encoder: SentenceBertEncoder) -> Path:
    cache = _copy(exported, tmp_path)
    onnx_file = OnnxEncoder(real_encoder, cache).export_file()
    damage(onnx_file)
    from cognitive_memory.encoding import resolve_model_path

    vectors = OnnxModel(resolve_model_path(real_encoder.model), onnx_file).encode(list(CHECK_TEXTS[:4]))
    assert min_cosine(vectors, real_encoder.encode(list(CHECK_TEXTS[:4]))) < 0.9  # really damaged
    return cache


def test_the_encoder_refuses_a_damaged_export_and_embeds_with_torch(
    damaged: Path, real_encoder: SentenceBertEncoder, caplog: pytest.LogCaptureFixture
) -> None:
    encoder = OnnxEncoder(real_encoder, damaged)
    with caplog.at_level(logging.WARNING):
        vectors = encoder.encode(["The payments service failed after the upgrade."])

    assert encoder.backend == "torch"
    assert (
        min_cosine(vectors, real_encoder.encode(["The payments service failed after the upgrade."])) > 0.9999
    )
    assert "is damaged" in caplog.text
    assert encoder.check_export()[0] == "damaged"


def test_doctor_fails_the_model_check_and_names_the_fix(
    damaged: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COGNITIVE_MEMORY_CACHE_DIR", str(damaged))
    result = runner.invoke(app, ["doctor", "--json"])

    assert result.exit_code != 0
    checks = {check["name"]: check for check in json.loads(result.output)["checks"]}
    assert checks["model"]["status"] == "fail"
    assert "is damaged" in checks["model"]["detail"]
    assert "memory_system encoder export" in checks["model"]["detail"]


def test_encoder_status_reports_the_damage_and_encoder_export_repairs_it(
    damaged: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COGNITIVE_MEMORY_CACHE_DIR", str(damaged))
    status = runner.invoke(app, ["encoder", "status"])
    assert status.exit_code == 1
    assert status.output.startswith("backend: torch") and "damaged" in status.output

    repaired = runner.invoke(app, ["encoder", "export"])
    assert repaired.exit_code == 0, repaired.output
    after = runner.invoke(app, ["encoder", "status"])
    assert after.exit_code == 0 and after.output.startswith("backend: onnx"), after.output


def test_an_export_made_before_reference_vectors_is_checked_against_torch_once(
    exported: Path, tmp_path: Path, real_encoder: SentenceBertEncoder
) -> None:
    cache = _copy(exported, tmp_path)
    encoder = OnnxEncoder(real_encoder, cache)
    reference = encoder.export_file().with_name(REFERENCE_FILE)
    reference.unlink()
    modified = encoder.export_file().stat().st_mtime_ns

    assert encoder.check_export() == ("unverified", encoder.check_export()[1])
    assert encoder.encode(["still served"]).shape == (1, 384)
    assert encoder.backend == "torch"  # not trusted before the check
    encoder.warm_up()  # what a server does in the background: the check, not a new export

    assert encoder.backend == "onnx"
    assert reference.is_file()
    assert encoder.export_file().stat().st_mtime_ns == modified
    assert OnnxEncoder(real_encoder, cache).check_export()[0] == "ok"


def test_reference_vectors_are_those_of_torch(exported: Path, real_encoder: SentenceBertEncoder) -> None:
    saved = json.loads(
        OnnxEncoder(real_encoder, exported).export_file().with_name(REFERENCE_FILE).read_text()
    )
    expected = real_encoder.encode(saved["texts"])
    assert len(saved["texts"]) >= 3
    assert min_cosine(np.asarray(saved["vectors"], dtype=np.float32), expected) > MIN_COSINE
