"""bench/words.py: a bulk build embeds each distinct turn once; a later pass's copy lies near it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bench.words import FirstPassEncoder
from cognitive_memory.core.memory import Vector
from cognitive_memory.encoding import HashEncoder


class CountingEncoder(HashEncoder):
    """The hash encoder, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        super().__init__(384)
        self.embedded: list[str] = []

    def encode(self, texts: Sequence[str]) -> Vector:
        self.embedded += texts
        return super().encode(texts)


def test_a_turn_is_embedded_once_and_its_later_passes_lie_near_it() -> None:
    inner = CountingEncoder()
    encoder = FirstPassEncoder(inner)
    turn = "[8 May 2023] Ana: we went hiking"

    first, second, third = encoder.encode([turn, f"{turn} (pass 2)", f"{turn} (pass 3)"])

    assert inner.embedded == [turn]
    assert np.array_equal(first, inner.encode([turn])[0])
    for later in (second, third):
        assert 0.97 < float(first @ later) < 1.0
        assert abs(float(np.linalg.norm(later)) - 1.0) < 1e-5
    assert float(second @ third) < 1.0


def test_a_later_pass_is_moved_the_same_in_every_run() -> None:
    text = "[8 May 2023] Ana: we went hiking (pass 2)"
    again = FirstPassEncoder(HashEncoder(384)).encode([text])

    assert np.array_equal(FirstPassEncoder(HashEncoder(384)).encode([text]), again)
    assert FirstPassEncoder(HashEncoder(384)).name == HashEncoder(384).name
