"""A sentence-transformers model (BERT + mean pooling + normalisation) run by ONNX Runtime.

The export itself lives in ``onnx_export``; this module only reads files that already exist.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cognitive_memory.core.memory import Vector
from cognitive_memory.errors import EncoderError
from cognitive_memory.regular_files import open_regular, read_regular

__all__ = [
    "EXPORT_FORMAT",
    "KEYS_FILE",
    "MIN_COSINE",
    "MODEL_SHA256",
    "REFERENCE_FILE",
    "OnnxModel",
    "check_reference",
    "export_path",
    "file_sha256",
    "max_seq_length",
    "min_cosine",
    "reference_path",
]

# (device, inode, size, modification time in ns): which file a path named when it was read.
FileIdentity = tuple[int, int, int, int]

# Bumped whenever the exported graph changes shape, so old exports are never read.
EXPORT_FORMAT = "v1"
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
_KEYED_FILES = ("config.json", "tokenizer.json", "sentence_bert_config.json")
BATCH_SIZE = 64
MIN_COSINE = 0.999
# Beside model.onnx: a few sentences and the vectors the torch model gave them at export time,
# and the sha256 of the model.onnx that was checked against torch.
REFERENCE_FILE = "reference.json"
MODEL_SHA256 = "model_sha256"
# In the exports' folder: the hash of each model directory, with the identity of the files hashed.
KEYS_FILE = "keys.json"


def min_cosine(left: Vector, right: Vector) -> float:
    """The smallest row-wise cosine similarity between two stacks of vectors."""
    left_n = left / np.clip(np.linalg.norm(left, axis=1, keepdims=True), 1e-12, None)
    right_n = right / np.clip(np.linalg.norm(right, axis=1, keepdims=True), 1e-12, None)
    return float((left_n * right_n).sum(axis=1).min())


def reference_path(onnx_file: Path) -> Path:
    """Where the reference vectors of the export ``onnx_file`` are kept."""
    return onnx_file.with_name(REFERENCE_FILE)


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes, in hex (about 0.1 s for the 90 MB export)."""
    return _identified_sha256(path)[1]


def _identity(status: os.stat_result) -> FileIdentity:
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)


def _identified_sha256(path: Path) -> tuple[FileIdentity, str]:
    """The identity of the file ``path`` names and the sha256 of that same file's bytes."""
    digest = hashlib.sha256()
    with open_regular(path) as handle:
        identity = _identity(os.fstat(handle.fileno()))
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return identity, digest.hexdigest()


def check_reference(model: OnnxModel, onnx_file: Path) -> float | None:
    """Check the export ``onnx_file`` (loaded as ``model``) against what was saved when it was made
    and checked against torch: its sha256 (any changed byte, in any weight) and the vectors of the
    reference sentences (a runtime or tokenizer that computes wrong). Returns the smallest cosine
    to those vectors; None when the export records no sha256 (made by an older version).
    Raises ``EncoderError`` when either differs."""
    path = reference_path(onnx_file)
    try:
        saved = json.loads(read_regular(path))
        texts = [str(text) for text in saved["texts"]]
        expected = np.asarray(saved["vectors"], dtype=np.float32).reshape(len(texts), -1)
        recorded = saved.get(MODEL_SHA256)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise EncoderError(f"the reference vectors {path} are unreadable ({exc})") from exc
    if recorded is None:
        return None
    try:
        identity, actual = _identified_sha256(onnx_file)
    except OSError as exc:
        raise EncoderError(f"the export at {onnx_file} cannot be read ({exc})") from exc
    if identity != model.file_identity:  # replaced or written since the session read it
        raise EncoderError(f"the export at {onnx_file} changed while it was loading; it is loaded again")
    if actual != recorded:
        raise EncoderError(
            f"the export at {onnx_file} is damaged: its sha256 is not the one recorded when it was "
            "exported and checked against torch (a byte of it changed since)"
        )
    cosine = min_cosine(model.encode(texts), expected) if texts else 0.0
    if not cosine > MIN_COSINE:
        raise EncoderError(
            f"the export at {onnx_file} is damaged: its vectors differ from those the model gave when it "
            f"was exported (min cosine {cosine:.4f}, needs > {MIN_COSINE})"
        )
    return cosine


def export_path(model_dir: Path, cache_dir: Path, label: str) -> Path:
    """Where the export of the weights in ``model_dir`` lives: keyed by a hash of the weights,
    the tokenizer and the configuration, so changed weights never meet a stale export."""
    folder = cache_dir.expanduser() / "onnx"
    return folder / f"{label}-{_model_digest(model_dir, folder)[:16]}" / "model.onnx"


def _model_digest(model_dir: Path, folder: Path) -> str:
    """The hash of ``model_dir``'s keyed files, read from ``folder``'s ``KEYS_FILE`` while they are
    the files it was taken of (device, inode, size, modification time): hashing the 90 MB of
    weights took 0.09 s at every start, before the model could load. Files written again get a
    new modification time (a reinstall, new inodes too), and are hashed again."""
    files = [model_dir / name for name in (*_WEIGHT_FILES, *_KEYED_FILES) if (model_dir / name).is_file()]
    identity = [[path.name, *_identity(path.stat())] for path in files]
    keys_file, key = folder / KEYS_FILE, f"{EXPORT_FORMAT}:{model_dir.resolve()}"
    try:
        keys = json.loads(read_regular(keys_file))
    except (OSError, ValueError):  # a FIFO or a device there too: never waited on
        keys = {}
    keys = keys if isinstance(keys, dict) else {}
    kept = keys.get(key)
    if isinstance(kept, dict) and kept.get("files") == identity and isinstance(kept.get("digest"), str):
        return str(kept["digest"])
    digest = hashlib.sha256(EXPORT_FORMAT.encode())
    for path in files:
        digest.update(path.name.encode())
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    keys[key] = {"files": identity, "digest": digest.hexdigest()}  # other models' keys kept
    with contextlib.suppress(OSError):  # unwritable: hashed again next time
        folder.mkdir(parents=True, exist_ok=True)
        scratch = keys_file.with_name(f".{KEYS_FILE}.{os.getpid()}")
        scratch.write_text(json.dumps(keys), encoding="utf-8")
        os.replace(scratch, keys_file)
    return digest.hexdigest()


def max_seq_length(model_dir: Path) -> int:
    """The truncation length sentence-transformers applies (``sentence_bert_config.json``)."""
    config = model_dir / "sentence_bert_config.json"
    try:
        return int(json.loads(config.read_text())["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise EncoderError(f"{config} does not give max_seq_length: {exc}") from exc


def _runtime_errors() -> tuple[type[Exception], ...]:
    """ONNX Runtime's own exception types (they derive from Exception only)."""
    from onnxruntime.capi import onnxruntime_pybind11_state as state

    names = ("Fail", "InvalidArgument", "NoSuchFile", "InvalidProtobuf", "InvalidGraph", "RuntimeException")
    return tuple(getattr(state, name) for name in names if hasattr(state, name))


class OnnxModel:
    """Tokenise with ``tokenizers``, run the exported transformer, mean-pool and L2-normalise."""

    def __init__(self, model_dir: Path, onnx_file: Path, *, threads: int | None = None) -> None:
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EncoderError(f"ONNX Runtime is not installed ({exc}): run `make install`.") from exc
        tokenizer_file = model_dir / "tokenizer.json"
        if not tokenizer_file.is_file():
            raise EncoderError(f"{model_dir} has no tokenizer.json; the ONNX encoder needs one.")
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        # tokenizer.json ships with fixed 128-token padding; sentence-transformers pads to the
        # longest text of the batch and truncates at max_seq_length instead.
        self._tokenizer.enable_truncation(max_length=max_seq_length(model_dir))
        pad_id = self._tokenizer.token_to_id("[PAD]") or 0
        self._tokenizer.enable_padding(pad_id=pad_id, pad_token="[PAD]")
        options = onnxruntime.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        errors: tuple[type[Exception], ...] = (OSError, *_runtime_errors())
        try:
            # Taken before the session reads the file: check_reference hashes the file only if it
            # is still this one, so the hash is of the bytes that run.
            self.file_identity = _identity(onnx_file.stat())
            self._session: Any = onnxruntime.InferenceSession(
                str(onnx_file), options, providers=["CPUExecutionProvider"]
            )
        except errors as exc:
            raise EncoderError(f"ONNX Runtime could not load {onnx_file}: {exc}") from exc
        self._inputs = {item.name for item in self._session.get_inputs()}

    def encode(self, texts: Sequence[str]) -> Vector:
        """Return normalised float32 vectors, one row per text, in batches of 64."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        parts = [self._encode_batch(texts[i : i + BATCH_SIZE]) for i in range(0, len(texts), BATCH_SIZE)]
        return np.concatenate(parts) if len(parts) > 1 else parts[0]

    def _encode_batch(self, texts: Sequence[str]) -> Vector:
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([item.ids for item in encodings], dtype=np.int64)
        mask = np.array([item.attention_mask for item in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.asarray(pooled / np.clip(norms, 1e-12, None), dtype=np.float32)
