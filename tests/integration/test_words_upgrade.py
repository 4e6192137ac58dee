"""An older store (its points without words, no marker) opened by this release: every memory is
recalled before, during and after its words are built into the index; a stopped build resumes at
its watermark; a store or an edit racing with a batch ends with its new words in the index."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from cognitive_memory.core.records import MemoryEdit
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.index.sparse import SparseVector, query_stems, words_query
from cognitive_memory.main import build_system
from cognitive_memory.replicas.index_words import WordsUpgrade
from cognitive_memory.settings import Settings
from cognitive_memory.system import CognitiveSystem
from cognitive_memory.upkeep.vectors import check_words
from tests.aging import WORDS, make_old_store, note


def _open() -> CognitiveSystem:
    system = build_system(Settings(env_file=None), encoder=HashEncoder())
    system.retriever.config = replace(system.retriever.config, words_in_index=True)
    return system


@pytest.fixture
def old_ids(data_dir: Path) -> list[str]:
    return make_old_store()


@pytest.fixture
def system(old_ids: list[str]) -> Iterator[CognitiveSystem]:
    opened = _open()
    yield opened
    opened.close()


def _recalled(system: CognitiveSystem, word: str) -> list[str]:
    result = system.retrieve(word, max_results=3, include_bridges=False)
    return [ranked.memory.id for ranked in [*result.core, *result.peripheral]]


def _every_word_finds_its_memory(system: CognitiveSystem, ids: list[str]) -> bool:
    return all(memory_id in _recalled(system, word) for word, memory_id in zip(WORDS, ids, strict=True))


def _index_words(system: CognitiveSystem, word: str) -> set[str]:
    """The memories whose words in the index hold ``word`` (their own or a neighbour's)."""
    words = system.records.words
    terms = words.query_terms(word)
    query = words_query(terms, *words.document_counts(query_stems(terms)))
    vector = system.encoder.encode([word])[0]
    _, found = system.vectors.search_with_words(vector, query, 50, None, precise=True)
    return {hit.id for hit in found}


def _fts5_words(system: CognitiveSystem, word: str) -> set[str]:
    return {memory_id for memory_id, _ in system.records.words.search(word, 50)}


def _build(system: CognitiveSystem, batch_size: int = 4) -> int:
    """Run the build to its end; returns the batches written."""
    upgrade = WordsUpgrade(system.records, system.vectors, batch_size)
    batches = 0
    while upgrade.step():
        batches += 1
    return batches


def test_an_old_store_recalls_every_memory_before_during_and_after_its_words_are_built(
    system: CognitiveSystem, old_ids: list[str]
) -> None:
    before = (_every_word_finds_its_memory(system, old_ids), system.retriever.words_from_index())
    upgrade = WordsUpgrade(system.records, system.vectors, batch_size=4)
    upgrade.step()
    during = (_every_word_finds_its_memory(system, old_ids), system.retriever.words_from_index())
    progress = system.status().words_index
    while upgrade.step():
        pass
    after = (_every_word_finds_its_memory(system, old_ids), system.retriever.words_from_index())

    assert before == (True, False)
    assert during == (True, False)
    assert progress == (4, len(WORDS))
    assert after == (True, True)
    assert system.status().words_index is None
    assert all(_index_words(system, word) == _fts5_words(system, word) for word in WORDS)


def test_a_new_store_has_every_memorys_words_in_the_index_from_the_start(data_dir: Path) -> None:
    system = _open()
    try:
        system.store(note("zeppelin"))
        assert (system.status().words_index, system.retriever.words_from_index()) == (None, True)
    finally:
        system.close()


def test_a_build_stopped_half_way_resumes_at_its_watermark(
    old_ids: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _open()
    try:
        WordsUpgrade(first.records, first.vectors, batch_size=4).step()
    finally:
        first.close()
    again = _open()
    written: list[str] = []
    inner = again.vectors.update_words
    monkeypatch.setattr(again.vectors, "update_words", lambda words: written.extend(words) or inner(words))
    try:
        resumed_at = again.status().words_index
        _build(again)
        assert resumed_at == (4, len(WORDS))
        assert sorted(written) == sorted(old_ids[4:])
        assert _every_word_finds_its_memory(again, old_ids)
    finally:
        again.close()


def _racing(
    system: CognitiveSystem, race: Callable[[], object], when: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run ``race`` inside the build's first write of the words of ``when``, before that write."""
    inner = system.vectors.update_words
    raced = False

    def update_words(words: Mapping[str, SparseVector]) -> Any:
        nonlocal raced
        if when in words and not raced:
            raced = True
            race()
        return inner(words)

    monkeypatch.setattr(system.vectors, "update_words", update_words)


def test_an_edit_racing_with_a_batch_ends_with_its_new_words_in_the_index(
    system: CognitiveSystem, old_ids: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    edited = old_ids[1]
    _racing(system, lambda: system.edits.update(edited, MemoryEdit(text=note("walrus"))), edited, monkeypatch)

    _build(system)

    assert _index_words(system, "walrus") == _fts5_words(system, "walrus") >= {edited, old_ids[0], old_ids[2]}
    assert _index_words(system, WORDS[1]) == _fts5_words(system, WORDS[1]) == set()
    assert _recalled(system, "walrus")[0] == edited


def test_a_store_racing_with_a_batch_gives_its_neighbour_new_words(
    system: CognitiveSystem, old_ids: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    last = old_ids[-1]
    stored: list[str] = []
    store = lambda: stored.append(system.store(note("walrus"), session_id="old").memory.id)  # noqa: E731 - one line
    _racing(system, store, last, monkeypatch)

    _build(system)

    assert _index_words(system, "walrus") == _fts5_words(system, "walrus") >= {stored[0], last}
    assert _every_word_finds_its_memory(system, old_ids)


def test_a_rebuild_of_the_index_marks_every_memorys_words_in_it(system: CognitiveSystem) -> None:
    system.rebuild_index()

    assert system.status().words_index is None
    assert system.retriever.words_from_index()
    assert all(_index_words(system, word) == _fts5_words(system, word) for word in WORDS)


def test_doctor_says_the_words_are_being_built_then_that_they_are_all_in(system: CognitiveSystem) -> None:
    building = check_words(system)
    _build(system)
    built = check_words(system)

    assert (building.status, building.detail) == (
        "ok",
        "being built in the background: 0 of 10 memories "
        "(recall searches the words in SQLite until they are all in)",
    )
    assert (built.status, built.detail) == ("ok", "every memory's words are in the vector index")


def test_the_build_runs_on_its_own_in_the_process_that_owns_the_index(system: CognitiveSystem) -> None:
    upgrade = WordsUpgrade(system.records, system.vectors, batch_size=4)
    try:
        upgrade.start(lambda: True, delay=0)
        assert upgrade.wait(timeout=30)
        assert system.status().words_index is None
    finally:
        upgrade.close()


def test_a_process_that_does_not_own_the_index_leaves_the_build_to_its_owner(system: CognitiveSystem) -> None:
    asked = threading.Event()
    upgrade = WordsUpgrade(system.records, system.vectors, batch_size=4)

    def owns_index() -> bool:
        asked.set()
        return False

    upgrade.start(owns_index, delay=0)
    assert asked.wait(timeout=30)
    upgrade.close()

    assert system.status().words_index == (0, len(WORDS))


# main before the word vectors (issue #29): the release whose stores this one upgrades.
RELEASE = "7143c328e69a692aa60c2ffaf18f9afa0e662966"
_STORE_WITH_RELEASE = """
from cognitive_memory.encoding import HashEncoder
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings
system = build_system(Settings(env_file=None), encoder=HashEncoder())
for word in {words!r}:
    print(system.store("A note that mentions the " + word + " once", session_id="old").memory.id)
system.close()
"""


def _release_code(into: Path) -> Path | None:
    """The release's ``cognitive_memory`` package, unpacked under ``into`` (None without the history)."""
    root = Path(__file__).resolve().parents[2]
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", RELEASE, "cognitive_memory"], capture_output=True, check=False
    )
    if archive.returncode != 0:
        return None
    into.mkdir()
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


@pytest.mark.subprocess
def test_a_store_written_by_the_release_before_the_words_keeps_every_memory_recallable(
    tmp_path: Path,
) -> None:
    code = _release_code(tmp_path / "release")
    if code is None:
        pytest.skip(f"the release {RELEASE[:7]} is not in this clone's history")
    environment = {**os.environ, "PYTHONPATH": str(code)}
    script = _STORE_WITH_RELEASE.format(words=list(WORDS))
    written = subprocess.run(
        [sys.executable, "-c", script], env=environment, capture_output=True, text=True, check=True, cwd=code
    )
    ids = written.stdout.split()
    system = _open()
    try:
        before = (_every_word_finds_its_memory(system, ids), system.status().words_index)
        unworded = set().union(*(_index_words(system, word) for word in WORDS))
        WordsUpgrade(system.records, system.vectors, batch_size=4).step()
        during = (_every_word_finds_its_memory(system, ids), system.status().words_index)
        _build(system)
        after = (_every_word_finds_its_memory(system, ids), system.status().words_index)

        assert before == (True, (0, len(WORDS)))
        assert unworded == set()  # the release wrote no words
        assert during == (True, (4, len(WORDS)))
        assert after == (True, None)
        assert system.retriever.words_from_index()
        assert all(_index_words(system, word) == _fts5_words(system, word) for word in WORDS)
    finally:
        system.close()
