"""Recall's queries embedded, with other work (recall's word search) on another thread meanwhile."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from cognitive_memory.core.memory import Vector
from cognitive_memory.encoding.base import BesideEncoder, Encoder

__all__ = ["QueryEncoder"]

T = TypeVar("T")


class QueryEncoder:
    """Embeds recall's queries with ``encoder``, and runs work handed to ``embed_query`` beside
    the embedding when that is the faster way.

    On two cores or more, an encoder that can embed a text on one thread (``BesideEncoder``: the
    ONNX encoder's second session, loaded at its first use) leaves a core to the work meanwhile;
    on one core, or with an encoder that cannot (torch, the hash encoder), the query is embedded
    on every core and the work is left to the caller.
    """

    def __init__(self, encoder: Encoder, *, cores: int | None = None) -> None:
        available = (os.cpu_count() or 1) if cores is None else cores
        self._encoder = encoder
        self._beside = encoder if available >= 2 and isinstance(encoder, BesideEncoder) else None
        self._work = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-words")

    @property
    def works_beside(self) -> bool:
        """True when ``embed_query`` runs work handed to it on another thread (else it is ignored)."""
        return self._beside is not None

    def embed_query(
        self, text: str, beside: Callable[[], T] | None = None
    ) -> tuple[Vector, Future[T] | None]:
        """``text``'s vector, and ``beside`` (when given) under way on another thread while it was
        computed: its future, or None when ``beside`` was not started (see the class) and the
        caller runs that work itself. A failure of ``beside`` reaches whoever reads the future."""
        encoder = self._beside
        if beside is None or encoder is None:
            return self._encoder.encode([text])[0], None
        work = self._work.submit(beside)
        return encoder.encode_beside(text), work

    def warm_up(self, *, beside: Callable[[], bool]) -> None:
        """Load the model now (blocking); then, if ``beside()`` says the caller expects to hand
        ``embed_query`` work, what embedding beside that work needs."""
        self._encoder.warm_up()
        if self._beside is not None and beside():
            self._beside.warm_up_beside()

    def close(self) -> None:
        """Wait for work under way, then stop its thread."""
        self._work.shutdown(wait=True)
