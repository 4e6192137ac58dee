"""A store's named locks (``StoreOfRecord.exclusive``, what the loaders hold): one holder at a
time across the processes that open the store (played here by two stores opened on one database),
one that waits told once who holds it; a lock of another name, or of another store, is apart."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

from tests.integration.storage.conftest import Store


def test_a_second_holder_waits_for_the_first_and_is_told_who_holds_it(
    open_store: Callable[[str], Store],
) -> None:
    first, second = open_store("memories"), open_store("memories")
    events: list[str] = []
    told: list[str] = []
    holding = threading.Event()

    def hold() -> None:
        with first.exclusive("load", lambda holder: events.append("first waited")):
            events.append("first holds")
            holding.set()
            time.sleep(0.5)
            events.append("first lets go")

    thread = threading.Thread(target=hold)
    thread.start()
    holding.wait(10)
    with second.exclusive("load", told.append):
        events.append("second holds")
    thread.join()

    assert events == ["first holds", "first lets go", "second holds"]
    assert len(told) == 1
    assert str(os.getpid()) in told[0]  # the process (and, on a server, the host) holding it


def test_locks_of_other_names_or_other_stores_do_not_wait(open_store: Callable[[str], Store]) -> None:
    first, same, other = open_store("memories"), open_store("memories"), open_store("elsewhere")
    told: list[str] = []
    with (
        first.exclusive("load", told.append),
        same.exclusive("another", told.append),
        other.exclusive("load", told.append),
    ):
        pass
    assert told == []


def test_a_lock_is_taken_again_once_let_go(open_store: Callable[[str], Store]) -> None:
    store = open_store("memories")
    told: list[str] = []
    for _ in range(2):
        with store.exclusive("load", told.append):
            pass
    assert told == []
