"""The change log: every write of a memory, its links or its words appends the memory's id in the
write's own transaction, and a reader asks for what came after the last seq it read."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cognitive_memory import linking
from cognitive_memory.core.records import MemoryEdit
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.lifecycle import forgetting
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
from cognitive_memory.storage.change_log import Change
from cognitive_memory.system import CognitiveSystem


def changed(system: CognitiveSystem, since: int) -> set[tuple[str, str]]:
    """(memory id, kind) of every change after ``since``."""
    system.flush()
    found = system.records.changes.since(since)
    assert not found.whole
    return {(change.memory_id, change.kind) for change in found.changes}


def test_a_store_logs_the_memory_its_words_and_the_links_in_time_it_makes(
    hash_system: CognitiveSystem,
) -> None:
    first = hash_system.store("The deploy runs on Fridays.", session_id="s-1").memory.id
    head = hash_system.records.changes.head()

    second = hash_system.store("The deploy moved to Mondays.", session_id="s-1").memory.id

    assert {(second, "memory"), (second, "words"), (second, "links"), (first, "links")} <= changed(
        hash_system, head
    )
    assert hash_system.records.changes.head() > head


def test_an_update_a_link_an_unlink_a_recall_and_a_forget_each_log_the_memories_they_change(
    hash_system: CognitiveSystem,
) -> None:
    a = hash_system.store("Staging is restored from the nightly dump.").memory.id
    b = hash_system.store("The nightly dump runs at two in the morning.").memory.id
    steps = [
        (lambda: hash_system.edits.update(a, MemoryEdit(importance_score=0.9)), {(a, "memory")}),
        (lambda: linking.link(hash_system.records, a, b, "caused_by"), {(a, "links"), (b, "links")}),
        (lambda: linking.unlink(hash_system.records, a, b), {(a, "links"), (b, "links")}),
        (lambda: hash_system.retrieve("nightly dump", max_results=2), {(a, "uses"), (b, "uses")}),
        (lambda: forgetting.trash(hash_system, [b], "forgotten", None), {(b, "memory")}),
        (lambda: forgetting.restore(hash_system, [b]), {(b, "memory")}),
    ]
    for step, expected in steps:
        head = hash_system.records.changes.head()
        step()
        assert expected <= changed(hash_system, head), step


def test_the_log_is_written_in_the_writes_transaction_so_a_failed_write_logs_nothing(
    hash_system: CognitiveSystem,
) -> None:
    a = hash_system.store("Keys name one memory of a project.").memory.id
    head = hash_system.records.changes.head()

    with pytest.raises(RuntimeError), hash_system.records.database.transaction() as conn:
        conn.execute("UPDATE memories SET importance_score = 0.1 WHERE id = ?", (a,))
        raise RuntimeError("the write fails after its update")

    assert hash_system.records.changes.since(head).changes == []
    assert hash_system.records.changes.head() == head


def test_since_returns_the_changes_in_order_up_to_a_limit_and_the_seq_to_ask_from_next(
    hash_system: CognitiveSystem,
) -> None:
    head = hash_system.records.changes.head()
    ids = [hash_system.store(f"Memory number {n} of the log.").memory.id for n in range(3)]

    first = hash_system.records.changes.since(head, limit=2)
    rest = hash_system.records.changes.since(first.head)

    seqs = [change.seq for change in [*first.changes, *rest.changes]]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert [c.memory_id for c in first.changes] == [ids[0], ids[0]]  # its row, then its words
    assert rest.head == hash_system.records.changes.head()
    assert hash_system.records.changes.since(rest.head) == ([], rest.head, False)


def test_a_trimmed_log_tells_a_reader_that_fell_behind_to_read_the_store_whole(
    hash_system: CognitiveSystem,
) -> None:
    for n in range(6):
        hash_system.store(f"Memory number {n} to trim.")
    log = hash_system.records.changes
    head = log.head()

    assert log.trim(keep=100) == 0  # not a tenth over: nothing to do
    with pytest.raises(ValueError, match="newest row"):
        log.trim(keep=0)
    dropped = log.trim(keep=3)

    assert dropped == head - 3
    assert log.head() == head
    kept = log.since(head - 3)
    assert ([change.seq for change in kept.changes], kept.whole) == ([head - 2, head - 1, head], False)
    assert log.since(head - 4).whole
    assert log.since(0).whole


def test_inside_one_read_the_log_is_read_once_for_every_reader_and_answers_each_as_alone(
    hash_system: CognitiveSystem,
) -> None:
    log = hash_system.records.changes
    start = log.head()
    for n in range(4):
        hash_system.store(f"Memory number {n} read by several readers.")
    middle = start + (log.head() - start) // 2
    log.trim(keep=log.head() - start + 1)  # nothing goes: the bounds still come into it
    asked = [start, middle, log.head(), start - 1, log.head() + 3]
    alone = [log.since(seq) for seq in asked]  # each in a read of its own
    statements: list[str] = []
    database = hash_system.records.database

    database.trace(statements.append)
    try:
        together = hash_system.records.together(lambda: [log.since(seq) for seq in asked])
    finally:
        database.trace(None)

    assert together == alone
    # the oldest asked first (start - 1 reaches back further, so the log is read again for it)
    assert sum("FROM change_log WHERE seq >" in s for s in statements) == 2


def test_a_reader_ahead_of_the_log_is_told_to_read_the_store_whole(hash_system: CognitiveSystem) -> None:
    hash_system.store("A database put back from an older backup has an older log.")
    head = hash_system.records.changes.head()
    assert hash_system.records.changes.since(head + 50).whole


def test_a_store_made_before_the_log_opens_with_an_empty_log_that_then_grows(
    data_dir: Path,
) -> None:
    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    memory = system.store("Written before the log existed.").memory.id
    system.close()
    conn = sqlite3.connect(data_dir / "cognitive_memory.db")
    conn.execute("DELETE FROM change_log")
    conn.commit()
    conn.close()

    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    try:
        assert system.records.changes.head() == 0
        system.edits.update(memory, MemoryEdit(tags=["old"]))
        found = system.records.changes.since(0)
    finally:
        system.close()
    assert Change(found.head, memory, "memory") in found.changes
