"""The ONNX Runtime encoder: exported from the installed weights, the same vectors as torch."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from bench.corpus import memory_texts, query_texts
from cognitive_memory.core.memory import Vector
from cognitive_memory.encoding import OnnxEncoder, SentenceBertEncoder, onnx_export, resolve_model_path
from cognitive_memory.encoding.onnx_export import CHECK_TEXTS, MIN_COSINE, export_onnx, min_cosine
from cognitive_memory.encoding.onnx_model import REFERENCE_FILE
from cognitive_memory.errors import EncoderError
from cognitive_memory.main import build_system, model_encoder
from cognitive_memory.settings import EncoderSettings, Settings
from memory_system.cli import app

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def onnx_encoder(tmp_path_factory: pytest.TempPathFactory, real_encoder: SentenceBertEncoder) -> OnnxEncoder:
    """An encoder whose export was made (and verified) in a fresh cache directory."""
    encoder = OnnxEncoder(real_encoder, tmp_path_factory.mktemp("cache"))
    encoder.warm_up()
    return encoder


def test_warm_up_exports_the_model_and_switches_to_onnx(onnx_encoder: OnnxEncoder) -> None:
    assert onnx_encoder.backend == "onnx"
    assert onnx_encoder.export_file().is_file()
    assert onnx_encoder.name == "all-MiniLM-L6-v2"


def test_onnx_vectors_match_torch_on_varied_texts(
    onnx_encoder: OnnxEncoder, real_encoder: SentenceBertEncoder
) -> None:
    texts = [*memory_texts(150, seed=5), *query_texts(30), *CHECK_TEXTS, "x " * 400]
    onnx, torch = onnx_encoder.encode(texts), real_encoder.encode(texts)
    assert onnx.shape == torch.shape == (len(texts), 384)
    assert min_cosine(onnx, torch) > MIN_COSINE
    assert np.allclose(np.linalg.norm(onnx, axis=1), 1.0, atol=1e-4)
    one = onnx_encoder.encode([texts[-1]])
    assert min_cosine(one, torch[-1:]) > MIN_COSINE


def test_it_loads_quickly_once_the_export_exists_and_never_with_a_missing_model(
    tmp_path: Path, onnx_encoder: OnnxEncoder
) -> None:
    # What a server asks before loading the model beside its imports (``memory_system.opening``).
    fresh = OnnxEncoder(SentenceBertEncoder(), tmp_path / "empty-cache")
    assert not fresh.loads_quickly  # torch would load
    fresh.export_file().parent.mkdir(parents=True)
    fresh.export_file().write_bytes(b"")
    assert fresh.loads_quickly
    assert onnx_encoder.loads_quickly
    missing = OnnxEncoder(SentenceBertEncoder(str(tmp_path / "no-model")), tmp_path / "cache")
    assert not missing.loads_quickly  # the warm-up says why


def test_torch_serves_until_the_export_exists(tmp_path: Path, real_encoder: SentenceBertEncoder) -> None:
    encoder = OnnxEncoder(real_encoder, tmp_path / "empty-cache")
    vectors = encoder.encode(["the login page broke"])
    assert encoder.backend == "torch"
    assert not encoder.export_file().exists()
    assert np.allclose(vectors, real_encoder.encode(["the login page broke"]))


def test_an_export_that_disagrees_with_torch_is_refused_and_not_written(
    tmp_path: Path, real_encoder: SentenceBertEncoder
) -> None:
    def wrong(texts: Sequence[str]) -> Vector:
        vectors = np.random.default_rng(0).normal(size=(len(texts), 384)).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    target = tmp_path / "onnx" / "model.onnx"
    with pytest.raises(EncoderError, match="disagrees with the torch model"):
        export_onnx(resolve_model_path(real_encoder.model), target, wrong)
    assert list(target.parent.iterdir()) == []


def test_a_corrupt_export_falls_back_to_torch(
    tmp_path: Path, real_encoder: SentenceBertEncoder, caplog: pytest.LogCaptureFixture
) -> None:
    encoder = OnnxEncoder(real_encoder, tmp_path / "cache")
    encoder.export_file().parent.mkdir(parents=True)
    encoder.export_file().write_bytes(b"not an onnx graph")
    with caplog.at_level(logging.WARNING):
        vectors = encoder.encode(["still works"])
    assert encoder.backend == "torch"
    assert vectors.shape == (1, 384)
    assert "Ignoring the ONNX export" in caplog.text


def test_switching_backend_keeps_the_index_valid(
    data_dir: Path, onnx_encoder: OnnxEncoder, real_encoder: SentenceBertEncoder
) -> None:
    with_torch = build_system(Settings(env_file=None), encoder=real_encoder)
    stored = with_torch.store("The nightly backup job failed because the disk was full").memory
    with_torch.close()
    with_onnx = build_system(Settings(env_file=None), encoder=onnx_encoder)
    try:
        result = with_onnx.retrieve("why did the backup fail")
        assert stored.id in [match.memory.id for match in result.core]
    finally:
        with_onnx.close()


def test_the_backend_setting_chooses_the_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(model_encoder(Settings(env_file=None)), OnnxEncoder)
    monkeypatch.setenv("COGNITIVE_MEMORY_ENCODER", "torch")
    assert type(model_encoder(Settings(env_file=None))) is SentenceBertEncoder
    monkeypatch.setenv("COGNITIVE_MEMORY_ENCODER", "")
    monkeypatch.setenv("COGNITIVE_MEMORY_DEVICE", "cuda")
    assert type(model_encoder(Settings(env_file=None))) is SentenceBertEncoder
    monkeypatch.setenv("COGNITIVE_MEMORY_ENCODER", "tensorflow")
    with pytest.raises(ValidationError, match="COGNITIVE_MEMORY_ENCODER"):
        EncoderSettings(_env_file=None)  # type: ignore[call-arg]  # pydantic-settings init kwarg


def test_encoder_status_reports_a_missing_export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COGNITIVE_MEMORY_CACHE_DIR", str(tmp_path / "cache"))
    result = CliRunner().invoke(app, ["encoder", "status"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("backend: torch until the ONNX export exists")
    assert "(missing)" in result.output and "`memory_system encoder export` makes it now" in result.output


def test_warm_up_replaces_a_corrupt_export(
    tmp_path: Path,
    real_encoder: SentenceBertEncoder,
    onnx_encoder: OnnxEncoder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    exported: list[Path] = []

    def export_by_copying(
        model_dir: Path, target: Path, reference: Any, *, threads: int | None = None
    ) -> float:
        exported.append(target)
        target.write_bytes(onnx_encoder.export_file().read_bytes())
        reference = onnx_encoder.export_file().with_name(REFERENCE_FILE)
        target.with_name(REFERENCE_FILE).write_bytes(reference.read_bytes())  # with its sha256
        return 1.0

    monkeypatch.setattr(onnx_export, "export_onnx", export_by_copying)
    encoder = OnnxEncoder(real_encoder, tmp_path / "cache")
    encoder.export_file().parent.mkdir(parents=True)
    encoder.export_file().write_bytes(b"truncated")
    encoder.warm_up()
    assert exported == [encoder.export_file()]
    assert encoder.backend == "onnx"
