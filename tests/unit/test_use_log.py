"""The use log: uses written behind the caller, together, in order; a full log makes the caller
wait."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest

from cognitive_memory.core.uses import Use
from cognitive_memory.use_log import UseLog

AT = datetime(2026, 11, 26, tzinfo=UTC)


def use(*ids: str) -> Use:
    return Use(ids, ids, AT, AT.timestamp())


@pytest.fixture
def executor() -> Iterator[ThreadPoolExecutor]:
    pool = ThreadPoolExecutor(max_workers=1)
    yield pool
    pool.shutdown(wait=True)


def test_uses_made_while_the_writer_is_busy_are_written_together_in_order(
    executor: ThreadPoolExecutor,
) -> None:
    batches: list[Sequence[Use]] = []
    log = UseLog(batches.append, executor)
    busy = threading.Event()
    executor.submit(busy.wait)  # the bookkeeping thread at other work

    log.add(use("a", "b"))
    log.add(use("c"))
    log.add(use("a"))
    assert batches == [] and log.pending() == 3

    busy.set()
    executor.submit(lambda: None).result()
    assert batches == [[use("a", "b"), use("c"), use("a")]] and log.pending() == 0

    log.add(use("d"))
    executor.submit(lambda: None).result()
    assert batches[1:] == [[use("d")]]


def test_a_full_log_makes_the_caller_wait_until_its_uses_are_written(executor: ThreadPoolExecutor) -> None:
    batches: list[Sequence[Use]] = []
    log = UseLog(batches.append, executor, max_pending=3)
    busy = threading.Event()
    executor.submit(busy.wait)
    log.add(use("a"))
    log.add(use("b"))  # two waiting: the caller goes on

    third = threading.Thread(target=log.add, args=(use("c"),))
    third.start()
    third.join(timeout=0.2)
    assert third.is_alive() and batches == []  # the third waits for the writer

    busy.set()
    third.join(timeout=5)
    assert not third.is_alive()
    assert [u.used for batch in batches for u in batch] == [("a",), ("b",), ("c",)]


def test_flush_writes_what_waits_on_the_calling_thread_after_the_batch_being_written(
    executor: ThreadPoolExecutor,
) -> None:
    written: list[tuple[str, list[tuple[str, ...]]]] = []
    taken, release = threading.Event(), threading.Event()

    def write(batch: Sequence[Use]) -> None:
        if threading.current_thread().name != "flushing":
            taken.set()
            release.wait(5)  # the writer is slow (starved, on a busy machine)
        written.append((threading.current_thread().name, [u.used for u in batch]))

    log = UseLog(write, executor)
    log.add(use("a"))
    assert taken.wait(5)  # the writer took ("a",) and is writing it
    log.add(use("b"))
    log.add(use("c"))

    flushing = threading.Thread(target=log.flush, name="flushing")
    flushing.start()
    flushing.join(timeout=0.2)
    assert flushing.is_alive()  # it waits for the batch already taken
    release.set()
    flushing.join(timeout=5)

    assert [(name == "flushing", used) for name, used in written] == [
        (False, [("a",)]),
        (True, [("b",), ("c",)]),
    ]
    assert log.pending() == 0
