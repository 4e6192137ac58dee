"""Export a sentence-transformers model's transformer to ONNX, verified against torch.

Needs torch, transformers and onnx (installed with the package); the result is a plain fp32
ONNX file that ``OnnxModel`` runs without torch.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cognitive_memory.core.memory import Vector
from cognitive_memory.encoding.onnx_model import (
    MIN_COSINE,
    MODEL_SHA256,
    OnnxModel,
    file_sha256,
    min_cosine,
    reference_path,
)
from cognitive_memory.errors import EncoderError
from cognitive_memory.processes import is_running

__all__ = [
    "CHECK_TEXTS",
    "MIN_COSINE",
    "REFERENCE_TEXTS",
    "export_onnx",
    "min_cosine",
    "remove_abandoned_exports",
]

logger = logging.getLogger(__name__)

OPSET = 17
_AXES = {0: "batch", 1: "sequence"}
_NAMES = ("input_ids", "attention_mask", "token_type_ids")

# Short and long, punctuation, code, non-Latin scripts, an empty string and texts past the
# 256-token truncation, so padding, truncation and pooling are all compared.
CHECK_TEXTS: tuple[str, ...] = (
    "The payments service failed after the upgrade to version 42.",
    "Always check the logs before restarting anything.",
    "how to debug the login page",
    "Never deploy on a Friday without a rollback plan. " * 3,
    "def recall(query: str) -> list[Memory]:  # returns the best matches",
    "Ünïcödé, emoji 🙂 and 日本語のテキスト mixed with English words.",
    "",
    "a",
    "word " * 300,
    " ".join(f"token{n} and more context about release {n}" for n in range(120)),
    "Kafka consumer dropped events when the queue held 900 messages; fixed by batching commits.",
    "Prefer feature flags when changing the auth middleware.",
)

# Checked each time the export loads (a few milliseconds): prose, a principle, a query, code and
# non-Latin scripts.
REFERENCE_TEXTS: tuple[str, ...] = tuple(CHECK_TEXTS[index] for index in (0, 1, 2, 4, 5))


def export_onnx(
    model_dir: Path, target: Path, reference: Callable[[Sequence[str]], Vector], *, threads: int | None = None
) -> float:
    """Export the model in ``model_dir`` to ``target`` and return the smallest cosine between its
    vectors and ``reference``'s on ``CHECK_TEXTS`` (in one batch and one by one). Raises
    ``EncoderError`` and writes nothing unless that cosine exceeds ``MIN_COSINE``; the file
    appears atomically, so a concurrent reader never sees half of it. ``reference``'s vectors of
    ``REFERENCE_TEXTS`` and the file's sha256 are saved beside it, for every later load to check
    the export against."""
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_abandoned_exports(target.parent)
    handle, name = tempfile.mkstemp(prefix=f".export-{os.getpid()}-", suffix=".onnx", dir=target.parent)
    os.close(handle)
    scratch = Path(name)
    try:
        _export_graph(model_dir, scratch)
        cosine = _verify(OnnxModel(model_dir, scratch, threads=threads), reference, scratch, target)
        scratch.chmod(0o644)
        os.replace(scratch, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            scratch.unlink()
    logger.info("Exported %s to ONNX at %s (min cosine against torch %.6f)", model_dir, target, cosine)
    return cosine


def remove_abandoned_exports(directory: Path) -> None:
    """Delete scratch files of exports whose process is gone (it ended before it could)."""
    for scratch in directory.glob(".export-*.onnx"):
        owner = scratch.name.split("-")[1]
        if not owner.isdigit() or not is_running(int(owner)):
            with contextlib.suppress(OSError):
                scratch.unlink()
                logger.info("Removed %s, left by an export that did not finish", scratch)


def _verify(
    model: OnnxModel, reference: Callable[[Sequence[str]], Vector], checked: Path, onnx_file: Path
) -> float:
    """The smallest cosine to ``reference`` on ``CHECK_TEXTS`` of ``model``, loaded from the file
    ``checked``; when it passes, saves beside ``onnx_file`` (where ``checked`` is then renamed)
    the reference vectors and the sha256 of ``checked``."""
    texts = list(CHECK_TEXTS)
    expected = reference(texts)
    batched = min_cosine(model.encode(texts), expected)
    single = min_cosine(np.concatenate([model.encode([text]) for text in texts]), expected)
    cosine = min(batched, single)
    if not cosine > MIN_COSINE:
        raise EncoderError(
            f"The ONNX export disagrees with the torch model (min cosine {cosine:.6f} <= {MIN_COSINE}); "
            "keeping the torch encoder.",
        )
    vectors = {text: expected[texts.index(text)] for text in REFERENCE_TEXTS}
    _save_reference(onnx_file, vectors, file_sha256(checked))
    return cosine


def _save_reference(onnx_file: Path, vectors: dict[str, Vector], sha256: str) -> None:
    """Write the reference vectors (float32 values, exactly) and the export's sha256 beside
    ``onnx_file``, atomically."""
    body = {
        "texts": list(vectors),
        "vectors": [[float(x) for x in vector] for vector in vectors.values()],
        MODEL_SHA256: sha256,
    }
    target = reference_path(onnx_file)
    scratch = target.with_name(f".{target.name}.{os.getpid()}")
    try:
        scratch.write_text(json.dumps(body), encoding="utf-8")
        scratch.chmod(0o644)
        os.replace(scratch, target)
    except OSError as exc:
        raise EncoderError(f"Could not save the export's reference vectors at {target}: {exc}") from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            scratch.unlink()


def _export_graph(model_dir: Path, target: Path) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise EncoderError(f"Exporting to ONNX needs torch and transformers: {exc}") from exc
    try:
        model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()
        sample = torch.ones((2, 8), dtype=torch.long)
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer chatter about constant shapes, not errors
            torch.onnx.export(
                _last_hidden_state(model),
                (sample, sample, torch.zeros_like(sample)),
                str(target),
                opset_version=OPSET,
                dynamo=False,
                input_names=list(_NAMES),
                output_names=["last_hidden_state"],
                dynamic_axes=dict.fromkeys((*_NAMES, "last_hidden_state"), _AXES),
            )
    except (OSError, ValueError, RuntimeError, ImportError) as exc:
        raise EncoderError(f"Could not export {model_dir} to ONNX: {exc}") from exc


def _last_hidden_state(model: Any) -> Any:
    """Wrap a transformers model so it returns last_hidden_state alone (torch imported lazily)."""
    import torch

    class LastHiddenState(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    return LastHiddenState(model)
