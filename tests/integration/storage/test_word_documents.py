"""The texts and lengths the word vectors are weighted from (storage/word_documents.py)."""

from __future__ import annotations

import pytest

from cognitive_memory.storage import word_documents


@pytest.mark.parametrize(
    ("encoded", "value"),
    [
        (b"\x05", [5]),
        (b"\x81\x00", [128]),
        (b"\x83\xe8\x01", [62_465]),
        (b"\xff" * 8 + b"\x01", [2**64 - 255]),
        (b"\x81", []),
    ],
)
def test_sqlite_varints_decode(encoded: bytes, value: list[int]) -> None:
    assert word_documents._varints(encoded, 1) == value
