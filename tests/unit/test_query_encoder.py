"""Recall's queries embedded (encoding/query_encoder.py), with work beside the embedding only when
the encoder can embed on one thread of a machine of two cores or more."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest

from cognitive_memory.core.memory import Vector
from cognitive_memory.encoding import HashEncoder, QueryEncoder


class _OneThread(HashEncoder):
    """A hash encoder that can embed one text on one thread, and says which way it was asked."""

    def __init__(self) -> None:
        super().__init__(dimension=8)
        self.calls: list[str] = []

    def encode(self, texts: Sequence[str]) -> Vector:
        self.calls.append("encode")
        return super().encode(texts)

    def encode_beside(self, text: str) -> Vector:
        self.calls.append("beside")
        vector: Vector = super().encode([text])[0]
        return vector

    def warm_up_beside(self) -> None:
        self.calls.append("warm beside")


def test_work_runs_on_another_thread_while_the_query_is_embedded_on_one() -> None:
    encoder = _OneThread()
    queries = QueryEncoder(encoder, cores=2)
    try:
        assert queries.works_beside
        vector, work = queries.embed_query("the login page", beside=threading.current_thread)
        assert work is not None and work.result() is not threading.current_thread()
        assert encoder.calls == ["beside"]
        assert np.array_equal(vector, HashEncoder(8).encode(["the login page"])[0])
    finally:
        queries.close()


@pytest.mark.parametrize(
    ("encoder", "cores"),
    [
        pytest.param(_OneThread(), 1, id="one-core"),
        pytest.param(HashEncoder(8), 2, id="no-one-thread-encoding"),
    ],
)
def test_without_a_core_to_spare_the_query_is_embedded_on_all_and_the_work_left_to_the_caller(
    encoder: HashEncoder, cores: int
) -> None:
    queries = QueryEncoder(encoder, cores=cores)
    try:
        assert not queries.works_beside
        ran: list[str] = []
        vector, work = queries.embed_query("the login page", beside=lambda: ran.append("work"))
        assert work is None and ran == []
        assert vector.shape == (8,)
    finally:
        queries.close()


def test_without_work_the_query_is_embedded_on_every_core() -> None:
    encoder = _OneThread()
    queries = QueryEncoder(encoder, cores=2)
    try:
        _, work = queries.embed_query("the login page")
        assert work is None and encoder.calls == ["encode"]
    finally:
        queries.close()


def test_a_failure_of_the_work_reaches_whoever_reads_its_future() -> None:
    queries = QueryEncoder(_OneThread(), cores=2)

    def broken() -> None:
        raise OSError("disk I/O error")

    try:
        _, work = queries.embed_query("what broke", beside=broken)
        assert work is not None
        with pytest.raises(OSError, match="disk I/O error"):
            work.result()
    finally:
        queries.close()


def test_warm_up_loads_the_one_thread_encoding_only_when_work_is_expected() -> None:
    encoder = _OneThread()
    queries = QueryEncoder(encoder, cores=2)
    queries.warm_up(beside=lambda: False)
    assert encoder.calls == []
    queries.warm_up(beside=lambda: True)
    assert encoder.calls == ["warm beside"]
    queries.close()
