"""The words of a store made before they were indexed, built in the background; and every
memory's words weighed again there once a large store's average length drifts.

A store made by a release before the word vectors has points that carry only the meaning. Its
memories' words are weighed from SQLite (``index_points.words_of``) and written alone
(``VectorStore.update_words``) in small batches, in rowid order, on a thread of the process that
owns the index, pausing between batches as long as each took. SQLite keeps the last rowid done
and, at the end, the marker (``storage/indexed_words.py``): a killed build resumes where it was,
and recall searches the words in the index only once the marker is there (FTS5 until then).

A store or an edit racing with a batch writes its own words; the batch reads the texts it weighed
again after writing, and writes again those that changed meanwhile, so its write never leaves
older words over newer ones. A point the index lacks is left to the outbox, which writes it whole.

The same thread, once the build is done, stays to weigh the words again: a store above
``index_replication.REWEIGH_INLINE`` memories whose average length drifts takes the new average at once
and leaves this pass to write every memory's words against it (``storage/indexed_words.py``:
``REWEIGH_THROUGH``), batch by batch as the build does, while recall goes on in the index. The
thread looks for a pass every ``IDLE_SECONDS``, so a pass another process started is taken up by
the process that owns the index.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from cognitive_memory.core.store import IndexedWordRecords
from cognitive_memory.errors import StorageError
from cognitive_memory.index.vector_store import VectorStore
from cognitive_memory.replicas.index_points import DocumentReads, words_of
from cognitive_memory.storage.indexed_words import WordsProgress
from cognitive_memory.storage.word_documents import WordDocument

__all__ = ["WordsUpgrade", "WordsUpgradeRecords"]

logger = logging.getLogger(__name__)

BATCH = 256
# Seconds before the first batch: a command that opens the store for a moment starts no build.
START_DELAY = 30.0
# Seconds between two looks while another process owns the index, or after the index failed.
IDLE_SECONDS = 10.0
# The longest wait after the index failed (the wait doubles from IDLE_SECONDS at each failure).
LONGEST_IDLE = 600.0
# The least pause between two batches (seconds); a batch that took longer pauses as long.
PAUSE_SECONDS = 0.02
# Writes of one batch's words again while stores keep changing their texts; past it, the batch is
# done again later.
ROUNDS = 3


class WordsUpgradeRecords(Protocol):
    """The store of record as the build reads it (``storage.SQLiteMemoryStore``)."""

    @property
    def indexed_words(self) -> IndexedWordRecords: ...

    @property
    def word_documents(self) -> DocumentReads: ...


Weighed = tuple[float, dict[str, WordDocument]]


class WordsUpgrade:
    """Builds the words missing from the index of an older store (see the module docstring)."""

    def __init__(self, records: WordsUpgradeRecords, vectors: VectorStore, batch_size: int = BATCH) -> None:
        self._indexed = records.indexed_words
        self._documents = records.word_documents
        self._vectors = vectors
        self._batch_size = batch_size
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._thread: threading.Thread | None = None

    def progress(self) -> WordsProgress | None:
        """(memories whose words are in the index, memories), or None once all are."""
        return self._indexed.progress()

    def reweigh_progress(self) -> WordsProgress | None:
        """(memories whose words are weighed again, memories) while a pass runs, else None."""
        return self._indexed.reweigh_progress()

    def step(self) -> bool:
        """Write the words of the next batch of the build, or else of a pass weighing them again,
        and advance its watermark (past the last memory: set the marker, or end the pass); True
        while memories remain. Raises StorageError when the index fails."""
        if self._indexed.complete():
            return self._reweigh_step()
        batch = self._indexed.next_batch(self._batch_size)
        if not batch:
            self._indexed.mark_complete()
            logger.info("Every memory's words are in the vector index now")
            return False
        if self._write([memory_id for _, memory_id in batch]):
            self._indexed.advance(batch[-1][0])
        return True

    def _reweigh_step(self) -> bool:
        """One batch of the pass weighing the words again, if one is under way."""
        under_way = self._indexed.reweigh_batch(self._batch_size)
        if under_way is None:
            return False
        read, batch = under_way
        if not batch:
            self._indexed.end_reweigh(read)
            logger.info("Every memory's words are weighed against the store's average length again")
            return False
        if self._write([memory_id for _, memory_id in batch]):
            self._indexed.advance_reweigh(read, batch[-1][0])
        return True

    def _write(self, ids: Sequence[str]) -> bool:
        """Write the memories' words until a read after the write finds the texts they were
        weighed from unchanged; False if stores kept changing them (``ROUNDS``)."""
        average, texts = self._weigh(ids)
        for _ in range(ROUNDS):
            if not texts:
                return True
            missing = set(self._vectors.update_words({i: words_of(d, average) for i, d in texts.items()}))
            written = {i: d for i, d in texts.items() if i not in missing}
            now_average, now = self._weigh(list(written))
            average, texts = (
                now_average,
                {i: d for i, d in now.items() if now_average != average or written[i] != d},
            )
        return not texts

    def _weigh(self, ids: Sequence[str]) -> Weighed:
        """The average length the words are weighted with and the documents of ``ids`` that exist."""
        return self._documents.weighting_average(), self._documents.of(list(ids))

    def start(self, owns_index: Callable[[], bool], delay: float = START_DELAY) -> None:
        """Build, then weigh again when asked, on a thread of its own, from ``delay`` seconds from
        now, while ``owns_index()`` (the process that owns the index writes; the others wait)."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(
            target=self._run, args=(owns_index, delay), name="words-upgrade", daemon=True
        )
        self._thread.start()

    def _run(self, owns_index: Callable[[], bool], delay: float) -> None:
        wait, failures = delay, 0
        while not self._stop.wait(wait):
            if not owns_index():
                wait = IDLE_SECONDS
                continue
            started = time.monotonic()
            try:
                more = self.step()
            except StorageError as exc:
                failures += 1
                wait = min(LONGEST_IDLE, IDLE_SECONDS * 2 ** (failures - 1))
                log = logger.warning if failures == 1 else logger.debug
                log("Writing the words in the vector index waits %.0f s: %s", wait, exc)
                continue
            failures = 0
            (self._idle.clear if more else self._idle.set)()
            wait = max(PAUSE_SECONDS, time.monotonic() - started) if more else IDLE_SECONDS

    def wait(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds until the thread has nothing left to write (the build
        done, no pass under way when it last looked); True when so, or when none was started."""
        return self._thread is None or self._idle.wait(timeout)

    def close(self) -> None:
        """Stop the build (a batch under way finishes first); SQLite keeps where it was."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
