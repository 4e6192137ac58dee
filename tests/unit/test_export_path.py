"""Where a model's ONNX export lives: keyed by a hash of its files, kept in ``keys.json`` while the
files are the ones hashed, so a start does not hash 90 MB of weights again."""

from __future__ import annotations

import json
import os
from pathlib import Path

from cognitive_memory.encoding.onnx_model import KEYS_FILE, export_path
from tests.blocking import ends_within
from tests.hooking import fifo


def _model(folder: Path, weights: bytes = b"w" * 4096) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.safetensors").write_bytes(weights)
    (folder / "config.json").write_text('{"hidden_size": 384}')
    (folder / "tokenizer.json").write_text("{}")
    return folder


def test_the_same_files_give_the_same_place_and_the_key_is_kept(tmp_path: Path) -> None:
    model, cache = _model(tmp_path / "model"), tmp_path / "cache"

    first = export_path(model, cache, "m")

    assert export_path(model, cache, "m") == first
    assert (cache / "onnx" / KEYS_FILE).is_file()
    assert first.parent.parent == cache / "onnx" and first.parent.name.startswith("m-")


def test_the_kept_key_is_used_while_the_files_are_the_ones_hashed(tmp_path: Path) -> None:
    model, cache = _model(tmp_path / "model"), tmp_path / "cache"
    first = export_path(model, cache, "m")
    weights = model / "model.safetensors"
    status = weights.stat()
    weights.write_bytes(b"v" * 4096)  # same size; its time put back: the same file to the key
    os.utime(weights, ns=(status.st_atime_ns, status.st_mtime_ns))

    assert export_path(model, cache, "m") == first  # not hashed again
    (cache / "onnx" / KEYS_FILE).unlink()
    assert export_path(model, cache, "m") != first  # hashed: the bytes differ


def test_two_models_sharing_a_cache_keep_both_keys(tmp_path: Path) -> None:
    first, second, cache = _model(tmp_path / "a"), _model(tmp_path / "b", b"v" * 4096), tmp_path / "cache"

    export_path(first, cache, "m")
    export_path(second, cache, "m")

    keys = json.loads((cache / "onnx" / KEYS_FILE).read_text())
    assert sorted(key.split(":", 1)[1] for key in keys) == [str(first.resolve()), str(second.resolve())]


def test_changed_weights_get_another_place(tmp_path: Path) -> None:
    model, cache = _model(tmp_path / "model"), tmp_path / "cache"
    first = export_path(model, cache, "m")

    _model(model, b"x" * 5000)

    assert export_path(model, cache, "m") != first


def test_a_damaged_or_unwritable_key_file_only_costs_a_hash(tmp_path: Path) -> None:
    model, cache = _model(tmp_path / "model"), tmp_path / "cache"
    first = export_path(model, cache, "m")
    keys = cache / "onnx" / KEYS_FILE

    keys.write_text("[not a mapping")
    assert export_path(model, cache, "m") == first
    assert json.loads(keys.read_text())  # written again, whole

    keys.unlink()
    keys.mkdir()  # cannot be read or replaced
    assert export_path(model, cache, "m") == first


def test_a_fifo_at_the_keys_file_is_hashed_past_never_waited_on(tmp_path: Path) -> None:
    """Reading keys.json blocked for ever when it was a FIFO; now the weights are hashed again."""
    model, cache = _model(tmp_path / "model"), tmp_path / "cache"
    expected = export_path(model, tmp_path / "other-cache", "m")
    (cache / "onnx").mkdir(parents=True)
    with fifo(cache / "onnx" / KEYS_FILE) as path:
        assert (
            ends_within(5, lambda: export_path(model, cache, "m"), [path]).parent.name == expected.parent.name
        )
