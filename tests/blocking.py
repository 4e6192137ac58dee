"""Running a call that might block forever (opening a FIFO no process writes) with a bound, so
that a test of a file that must not hang fails, rather than hanging the suite, when it does."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

__all__ = ["ends_within"]

T = TypeVar("T")


def ends_within(seconds: float, call: Callable[[], T], fifos: Sequence[Path] = ()) -> T:
    """What ``call`` returns, or the exception it raises, run on a thread. If it has not ended after
    ``seconds``, each of ``fifos`` is opened for writing (a reader blocked in opening it is let go)
    and the test fails."""
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:  # handed to the test's thread
            failure.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        for fifo in fifos:
            with contextlib.suppress(OSError):  # no reader: ENXIO
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(seconds)
        raise AssertionError(f"still running after {seconds:g} s: it blocked")
    if failure:
        raise failure[0]
    return outcome[0]
