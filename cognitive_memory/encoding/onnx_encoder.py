"""The same model on ONNX Runtime: the same vectors, a fraction of torch's start-up and latency.

The ONNX file is exported from the installed weights (``make install`` does it; otherwise the
first warm-up does it in the background). Until it exists the torch encoder serves, so a fresh
machine works at once and gets faster once the export is there.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from cognitive_memory.core.memory import Vector
from cognitive_memory.encoding.onnx_model import OnnxModel, check_reference, export_path
from cognitive_memory.encoding.sentence_bert import SentenceBertEncoder, resolve_model_path
from cognitive_memory.errors import EncoderError

__all__ = ["ExportState", "OnnxEncoder"]

logger = logging.getLogger(__name__)

ExportState = Literal["ok", "missing", "unverified", "damaged"]


class OnnxEncoder:
    """Runs ``fallback``'s model on ONNX Runtime from an export cached under ``cache_dir``.

    Its ``name`` is the fallback's: the vectors are the same (checked at export), so an index built
    by either backend stays valid under the other.
    """

    def __init__(self, fallback: SentenceBertEncoder, cache_dir: Path, *, threads: int | None = None) -> None:
        self._fallback = fallback
        self._cache_dir = cache_dir
        self._threads = threads
        self._active: OnnxModel | SentenceBertEncoder | None = None
        self._lock = threading.Lock()
        self._export_lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._fallback.name

    @property
    def dimension(self) -> int:
        return self._fallback.dimension

    @property
    def is_ready(self) -> bool:
        return self._active is not None

    @property
    def backend(self) -> str:
        """``onnx`` or ``torch`` (serving until the export exists), or ``loading``."""
        active = self._active
        return "loading" if active is None else "onnx" if isinstance(active, OnnxModel) else "torch"

    @property
    def loads_quickly(self) -> bool:
        """Whether ``warm_up`` loads the export (ONNX Runtime builds its session leaving Python's
        GIL to other threads) rather than torch, whose imports hold it for seconds: loaded, or the
        export is there."""
        if self._active is not None:
            return True
        try:
            return self.export_file().is_file()
        except (EncoderError, OSError):  # the warm-up says why the model cannot load
            return False

    def export_file(self) -> Path:
        """Where the export of this model is (or will be) cached."""
        return export_path(resolve_model_path(self._fallback.model), self._cache_dir, self.name)

    def warm_up(self) -> None:
        """Load the export, or load torch and then export in this thread and switch to ONNX."""
        if self._loaded() is self._fallback:
            self.export()

    def export(self) -> Path | None:
        """Create the export if it is missing or unusable (verified against torch) and switch to it.
        Returns its path, or None when the export was refused or failed (torch keeps serving)."""
        from cognitive_memory.encoding import onnx_export

        with self._export_lock:
            model_dir = resolve_model_path(self._fallback.model)
            target = export_path(model_dir, self._cache_dir, self.name)
            try:
                if target.is_file():
                    try:
                        self._active = self._checked(
                            OnnxModel(model_dir, target, threads=self._threads), target
                        )
                        return target
                    except EncoderError as exc:
                        logger.warning("Exporting again: the export at %s is unusable: %s", target, exc)
                self._fallback.warm_up()
                onnx_export.export_onnx(model_dir, target, self._fallback.encode, threads=self._threads)
                self._active = self._checked(OnnxModel(model_dir, target, threads=self._threads), target)
            except EncoderError as exc:
                logger.warning("ONNX encoder unavailable, staying on torch: %s", exc)
                return None
            return target

    def encode(self, texts: Sequence[str]) -> Vector:
        vectors = self._loaded().encode(texts)
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dimension)

    def _loaded(self) -> OnnxModel | SentenceBertEncoder:
        active = self._active
        if active is not None:
            return active
        with self._lock:
            if self._active is None:
                self._active = self._load()
            return self._active

    def _load(self) -> OnnxModel | SentenceBertEncoder:
        model_dir = resolve_model_path(self._fallback.model)
        target = export_path(model_dir, self._cache_dir, self.name)
        if target.is_file():
            try:
                return self._checked(OnnxModel(model_dir, target, threads=self._threads), target)
            except EncoderError as exc:
                logger.warning("Ignoring the ONNX export at %s, torch serves: %s", target, exc)
        else:
            logger.info("No ONNX export at %s yet: torch serves until it is made", target)
        self._fallback.warm_up()
        return self._fallback

    def check_export(self) -> tuple[ExportState, str]:
        """Whether the export exists and is still the file that was checked against torch (its
        sha256) giving the vectors it was exported with, and why not. ``unverified``: made by an
        older version, which recorded no sha256; it is exported again before use. Changes nothing."""
        model_dir = resolve_model_path(self._fallback.model)
        target = export_path(model_dir, self._cache_dir, self.name)
        if not target.is_file():
            return "missing", f"no ONNX export at {target}"
        try:
            self._checked(OnnxModel(model_dir, target, threads=self._threads), target)
        except _Unverified as exc:
            return "unverified", exc.message
        except EncoderError as exc:
            return "damaged", exc.message
        return "ok", f"{target} gives the vectors it was exported with"

    def _checked(self, model: OnnxModel, target: Path) -> OnnxModel:
        """``model`` once its dimension, its file's sha256 and its reference vectors (see
        ``check_reference``) are right. An export recording no sha256 is refused as unverified:
        checking a few sentences cannot vouch for every weight, so ``export`` makes it again."""
        produced = model.encode(["dimension probe"]).shape[1]
        if produced != self.dimension:
            raise EncoderError(f"The ONNX export produces {produced}-d vectors; expected {self.dimension}.")
        if check_reference(model, target) is None:
            raise _Unverified(
                f"the export at {target} records no sha256 (it was made by an older version): it is "
                "exported again before use"
            )
        return model


class _Unverified(EncoderError):
    """An export made before its sha256 was recorded with it."""
