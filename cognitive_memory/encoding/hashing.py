"""A deterministic stand-in encoder for tests of plumbing and math (never for quality)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from cognitive_memory.core.memory import Vector

__all__ = ["HashEncoder"]

_TOKEN = re.compile(r"\w+", re.UNICODE)


class HashEncoder:
    """Bag-of-words hashed into ``dimension`` buckets: texts sharing words are similar."""

    def __init__(self, dimension: int = 384) -> None:
        self._dimension = dimension

    @property
    def name(self) -> str:
        return f"hash-{self._dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def is_ready(self) -> bool:
        return True

    def warm_up(self) -> None:
        """Nothing to load."""

    def encode(self, texts: Sequence[str]) -> Vector:
        vectors = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in _TOKEN.findall(text.lower()):
                digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self._dimension
                vectors[row, bucket] += 1.0 if digest[4] & 1 else -1.0
            norm = float(np.linalg.norm(vectors[row]))
            if norm:
                vectors[row] /= norm
            else:
                vectors[row, 0] = 1.0  # a text without words: one fixed unit vector
        return vectors
