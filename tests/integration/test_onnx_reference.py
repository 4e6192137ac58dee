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
from cognitive_memory.encoding.onnx_model import (
    MODEL_SHA256,
    REFERENCE_FILE,
    OnnxModel,
    check_reference,
    file_sha256,
)
from cognitive_memory.errors import EncoderError
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


def flip_embedding_byte(onnx_file: Path, token_id: int) -> None:
    """Flip one byte of ``token_id``'s row in the word-embedding table: an exponent bit of the
    row's largest weight that the flip multiplies by 16. Every other byte stays as it was."""
    import onnx

    graph = onnx.load(str(onnx_file))
    table = next(t for t in graph.graph.initializer if t.name.endswith("word_embeddings.weight"))
    data = bytearray(onnx_file.read_bytes())
    start = data.find(table.raw_data[:4096])
    assert start > 0 and data.find(table.raw_data[:4096], start + 1) == -1
    row = start + token_id * table.dims[1] * 4
    weights = np.frombuffer(bytes(data[row : row + table.dims[1] * 4]), dtype="<f4")
    # float32, little-endian: the fourth byte's bit 0x02 is the exponent's bit 2 (x16 when clear).
    growable = [i for i in range(len(weights)) if not data[row + 4 * i + 3] & 0x02]
    chosen = max(growable, key=lambda i: abs(float(weights[i])))
    data[row + 4 * chosen + 3] ^= 0x02
    onnx_file.write_bytes(bytes(data))


UNCHECKED_WORD = "volcano"


@pytest.fixture
def flipped(exported: Path, tmp_path: Path, real_encoder: SentenceBertEncoder) -> Path:
    """A copy of the export with one flipped byte in the row of a token that neither the reference
    sentences nor the export's check texts contain."""
    from tokenizers import Tokenizer

    from cognitive_memory.encoding import resolve_model_path

    cache = _copy(exported, tmp_path)
    onnx_file = OnnxEncoder(real_encoder, cache).export_file()
    model_dir = resolve_model_path(real_encoder.model)
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    checked = {token for text in (*CHECK_TEXTS, "dimension probe") for token in tokenizer.encode(text).ids}
    token_id = tokenizer.token_to_id(UNCHECKED_WORD)
    assert token_id is not None and token_id not in checked
    flip_embedding_byte(onnx_file, token_id)
    sentence = [f"Is the {UNCHECKED_WORD} near the town?"]
    cosine = min_cosine(OnnxModel(model_dir, onnx_file).encode(sentence), real_encoder.encode(sentence))
    assert cosine < 0.95  # really damaged, for every text holding that word
    return cache


def test_one_flipped_byte_outside_the_reference_sentences_makes_the_export_damaged(
    flipped: Path, real_encoder: SentenceBertEncoder, caplog: pytest.LogCaptureFixture
) -> None:
    encoder = OnnxEncoder(real_encoder, flipped)
    sentence = [f"Is the {UNCHECKED_WORD} near the town?"]
    with caplog.at_level(logging.WARNING):
        vectors = encoder.encode(sentence)

    state, detail = encoder.check_export()
    assert (state, encoder.backend) == ("damaged", "torch")
    assert "sha256" in detail
    assert min_cosine(vectors, real_encoder.encode(sentence)) > 0.9999


def test_doctor_and_encoder_status_report_a_flipped_byte_and_encoder_export_repairs_it(
    flipped: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COGNITIVE_MEMORY_CACHE_DIR", str(flipped))
    doctor = runner.invoke(app, ["doctor", "--json"])
    checks = {check["name"]: check for check in json.loads(doctor.output)["checks"]}
    assert checks["model"]["status"] == "fail"
    assert (
        "sha256" in checks["model"]["detail"] and "memory_system encoder export" in checks["model"]["detail"]
    )

    status = runner.invoke(app, ["encoder", "status"])
    assert status.exit_code == 1
    assert status.output.startswith("backend: torch") and "damaged" in status.output

    repaired = runner.invoke(app, ["encoder", "export"])
    assert repaired.exit_code == 0, repaired.output
    after = runner.invoke(app, ["encoder", "status"])
    assert after.exit_code == 0 and after.output.startswith("backend: onnx"), after.output


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


@pytest.mark.parametrize("older", ["without reference.json", "without a recorded sha256"])
def test_an_export_made_by_an_older_version_is_exported_again_before_onnx_serves(
    exported: Path, tmp_path: Path, real_encoder: SentenceBertEncoder, older: str
) -> None:
    cache = _copy(exported, tmp_path)
    encoder = OnnxEncoder(real_encoder, cache)
    reference = encoder.export_file().with_name(REFERENCE_FILE)
    if older == "without reference.json":
        reference.unlink()
    else:
        saved = json.loads(reference.read_text())
        del saved[MODEL_SHA256]
        reference.write_text(json.dumps(saved))
    old_file = encoder.export_file().stat().st_ino

    state, detail = encoder.check_export()
    assert state == "unverified" and "records no sha256" in detail
    assert encoder.encode(["still served"]).shape == (1, 384)
    assert encoder.backend == "torch"  # not trusted: a few sentences cannot vouch for every weight
    encoder.warm_up()  # what a server does in the background: a new export, checked against torch

    assert encoder.backend == "onnx"
    assert encoder.export_file().stat().st_ino != old_file
    assert json.loads(reference.read_text())[MODEL_SHA256] == file_sha256(encoder.export_file())
    assert OnnxEncoder(real_encoder, cache).check_export()[0] == "ok"


def test_reference_vectors_are_those_of_torch(exported: Path, real_encoder: SentenceBertEncoder) -> None:
    saved = json.loads(
        OnnxEncoder(real_encoder, exported).export_file().with_name(REFERENCE_FILE).read_text()
    )
    expected = real_encoder.encode(saved["texts"])
    assert len(saved["texts"]) >= 3
    assert min_cosine(np.asarray(saved["vectors"], dtype=np.float32), expected) > MIN_COSINE


def test_a_file_replaced_after_the_session_read_it_is_not_vouched_for_by_the_new_files_hash(
    exported: Path, tmp_path: Path, real_encoder: SentenceBertEncoder
) -> None:
    from cognitive_memory.encoding import resolve_model_path

    cache = _copy(exported, tmp_path)
    onnx_file = OnnxEncoder(real_encoder, cache).export_file()
    model = OnnxModel(resolve_model_path(real_encoder.model), onnx_file)
    replacement = onnx_file.with_name("replacement.onnx")
    shutil.copyfile(onnx_file, replacement)
    replacement.replace(onnx_file)  # same bytes, another file: what the session runs was not hashed

    with pytest.raises(EncoderError, match="changed while it was loading"):
        check_reference(model, onnx_file)
    assert check_reference(OnnxModel(resolve_model_path(real_encoder.model), onnx_file), onnx_file)
