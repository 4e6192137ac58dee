"""The encoder protocol: text in, normalized vectors out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from cognitive_memory.core.memory import Vector

__all__ = ["Encoder"]


@runtime_checkable
class Encoder(Protocol):
    """Turns texts into L2-normalized float32 vectors of ``dimension`` components."""

    @property
    def name(self) -> str:
        """The model's name, recorded with the index so vectors of two models never mix."""
        ...

    @property
    def dimension(self) -> int: ...

    @property
    def is_ready(self) -> bool:
        """True once the model is loaded and a call will not wait for it."""
        ...

    def warm_up(self) -> None:
        """Load the model now (blocking); later calls return at once."""
        ...

    def encode(self, texts: Sequence[str]) -> Vector:
        """Return an array of shape (len(texts), dimension)."""
        ...
