"""The vector index for memories stored one by one, built in another process.

Qdrant Edge searches a segment exactly until its optimizers build an HNSW index over it, and
building holds the GIL for the whole run (1 s at 10,000 vectors here, 11-45 s at 100,000, as it
merges the segments into one), so a serving process that built the index itself would stop
answering meanwhile. Bulk paths build it at their end (``CognitiveSystem.build_index``); for the
rest, the process that owns the shard watches its writes, and once enough vectors are searched
exactly (``unindexed_threshold``) it starts this module as a child process. The child copies
SQLite's vectors into a new shard beside the served one, builds its index and exits; the owner
then swaps it in (``EdgeVectorStore.adopt``) and applies the writes it journaled meanwhile.
Recall goes on, unchanged, on the old shard until the swap.

    python -m cognitive_memory.replicas.index_build --db DB --into DIR
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from cognitive_memory.errors import CognitiveMemoryError, StorageError
from cognitive_memory.index.edge_store import EdgeVectorStore
from cognitive_memory.storage.opening import is_server
from cognitive_memory.storage.outbox import to_be_indexed_at

__all__ = ["BackgroundIndexer", "main"]

logger = logging.getLogger(__name__)

# ``--db`` of a child that reads the database server's URL on its stdin (it may hold a password).
FROM_STDIN = "-"

# Writes between two looks at how many vectors the index misses (a look reads the shard's info).
CHECK_EVERY = 250
# A write of more points than this is part of a bulk path, which builds the index at its end.
BULK_WRITE = 64
# No build starts within this many seconds of a bulk write: a bulk load is under way, and its
# chunks follow one another (a 1,000,000-memory load ran for over an hour, and the first look
# started a build of its first few thousand vectors that the load's own build then redid).
BULK_QUIET_SECONDS = 30.0
# A process that opens a store first looks this many seconds later (if it still runs): commands
# that open it for a moment (`doctor`, `memory_system recall`) should not start a build to kill.
FIRST_LOOK_SECONDS = 30.0


class BackgroundIndexer:
    """Watches one shard's writes (``EdgeVectorStore.watcher``) and rebuilds its index in a child
    process when ``threshold(points)`` or more of its points are searched exactly, or, once per
    process, when a shard made before the memory-mapped layout holds segments on the heap (its
    load copies them whole: 2-3 s at 1,000,000 vectors; see ``edge_layout.shard_config``), or
    when it holds fewer points than SQLite has memories beside the vector writes still queued
    (its files were lost or replaced by an older copy: recall would miss the rest), or when its
    points lack their session (a shard made before it was in the payload: a session filter goes by
    the ids of the session's latest memories until the built shard is swapped in)."""

    def __init__(
        self,
        store: EdgeVectorStore,
        db: Path | str,
        threshold: Callable[[int], int],
        *,
        check_every: int = CHECK_EVERY,
        to_be_indexed: Callable[[], int] | None = None,
    ) -> None:
        """``db``: the store of record's location (a SQLite file, or a database server's URL, which
        the child is given in its environment, never on its command line); ``to_be_indexed``:
        how many memories the index should hold (default: read from the SQLite file)."""
        self._store = store
        self._db = str(db)
        self._to_be_indexed = to_be_indexed or (lambda: to_be_indexed_at(Path(self._db)))
        self._threshold = threshold
        self._check_every = check_every
        self._since_check = 0
        # The layout is looked at once: segments written since are always memory-mapped.
        self._layout_looked = False
        self._bulk_at = -float("inf")
        self._lock = threading.Lock()
        self._child: subprocess.Popen[bytes] | None = None
        self._closed = False
        self.builds = 0  # swapped in by this process
        self.last_timings: tuple[float, float] | None = None  # the last build's and swap's seconds
        self._first_look = _look_after(FIRST_LOOK_SECONDS, self.check)
        self._after_bulk: threading.Timer | None = None
        store.watcher = self

    @property
    def built_path(self) -> Path:
        return self._store.path.with_name(f"{self._store.path.name}.building")

    @property
    def running(self) -> bool:
        return self._child is not None

    @property
    def building(self) -> int | None:
        """The pid of the child building the index, if one runs."""
        child = self._child
        return child.pid if child is not None else None

    def wrote(self, count: int) -> None:
        if count > BULK_WRITE:
            # A bulk path that builds no index at its end (the words of an older store, written
            # in the background) leaves it to the look made once its writes have stopped.
            self._bulk_at = time.monotonic()
            with self._lock:
                if self._after_bulk is not None:
                    self._after_bulk.cancel()
                if not self._closed:
                    self._after_bulk = _look_after(BULK_QUIET_SECONDS + 1.0, self.check)
            return
        self._since_check += count
        if self._since_check >= self._check_every:
            self._since_check = 0
            self.check()

    def check(self) -> bool:
        """Start a build if the index misses enough vectors, none is running and no bulk write
        came in the last BULK_QUIET_SECONDS; True if started."""
        with self._lock:
            if self._closed or self._child is not None:
                return False
            if time.monotonic() - self._bulk_at < BULK_QUIET_SECONDS:
                return False  # the bulk path builds the index at its end
            try:
                points, unindexed = self._store.unindexed()
            except StorageError:
                return False
            missing = unindexed >= self._threshold(points)
            relayout = short = sessionless = False
            if not missing and not self._layout_looked:
                self._layout_looked = True
                relayout = self._store.heap_loaded() > 0
                short = not relayout and points < self._to_be_indexed()
                sessionless = not (relayout or short) and not _has_sessions(self._store)
            if not (missing or relayout or short or sessionless):
                return False
            shutil.rmtree(self.built_path, ignore_errors=True)
            self._store.journal()
            server = is_server(self._db)
            source = FROM_STDIN if server else self._db  # a URL may hold a password: not in argv
            command = [sys.executable, "-m", __name__, "--db", source, "--into", str(self.built_path)]
            try:
                self._child = subprocess.Popen(  # noqa: S603 - our own module, no shell
                    command,
                    stdin=subprocess.PIPE if server else subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                )
            except OSError as exc:
                self._store.drop_journal()
                logger.warning("Could not start the background index build: %s", exc)
                return False
            logger.info(
                "Building the vector index in process %d (%d of %d vectors unindexed%s)",
                self._child.pid,
                unindexed,
                points,
                "; its segments move from the heap to memory maps"
                if relayout
                else "; it holds fewer than SQLite's memories: they are copied from SQLite"
                if short
                else "; its points get their sessions"
                if sessionless
                else "",
            )
            given = self._db.encode() if server else None  # the URL, written to the child's stdin
            threading.Thread(
                target=self._wait, args=(self._child, given), name="index-build", daemon=True
            ).start()
            return True

    def _wait(self, child: subprocess.Popen[bytes], given: bytes | None) -> None:
        started = time.monotonic()
        _, errors = child.communicate(given)
        with self._lock:
            self._child = None
            if self._closed:
                return
            if child.returncode != 0:
                self._store.drop_journal()
                shutil.rmtree(self.built_path, ignore_errors=True)
                reason = errors.decode(errors="replace").strip().splitlines()[-1:] or [
                    f"exit {child.returncode}"
                ]
                logger.warning("The background index build failed (exact search goes on): %s", reason[0])
                return
            built = time.monotonic()
            try:
                self._store.adopt(self.built_path)
            except StorageError as exc:
                self._store.drop_journal()
                logger.warning("Could not swap in the rebuilt vector index (the old one serves): %s", exc)
                return
            self.builds += 1
            self.last_timings = (built - started, time.monotonic() - built)
        logger.info(
            "Swapped in the vector index built in the background (built in %.1f s, swapped in %.2f s)",
            *self.last_timings,
        )

    def close(self) -> None:
        """Stop a running build (its half-made shard is removed); nothing is lost: SQLite has it all."""
        self._first_look.cancel()
        with self._lock:
            self._closed = True
            child = self._child
            if self._after_bulk is not None:
                self._after_bulk.cancel()
        if child is not None:
            with contextlib.suppress(ProcessLookupError):
                child.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=10)
            shutil.rmtree(self.built_path, ignore_errors=True)
        self._store.drop_journal()


def _has_sessions(store: EdgeVectorStore) -> bool:
    """``store.has_sessions()``; True when the shard cannot say (no build for that)."""
    try:
        return store.has_sessions()
    except StorageError:
        return True


def _look_after(seconds: float, look: Callable[[], object]) -> threading.Timer:
    """``look`` run on a daemon thread in ``seconds`` (cancel the timer to drop it)."""
    timer = threading.Timer(seconds, look)
    timer.daemon = True
    timer.start()
    return timer


def build(db: Path | str, into: Path) -> int:
    """Copy the store of record's vectors (the SQLite file ``db``, or the database server at that
    URL) into a new shard at ``into`` and index it; returns the vectors copied."""
    from cognitive_memory.replicas.index_replication import copy_vectors
    from cognitive_memory.storage.opening import open_store

    location = str(db)
    if not is_server(location) and not Path(location).is_file():
        # opening would create an empty database, and an empty index from it
        raise StorageError(f"The memory database {db} does not exist.")
    records = open_store(location)
    try:
        store = EdgeVectorStore(into)
        try:
            report = copy_vectors(records, store, served=False)
            store.build_index(0)
        finally:
            store.close()
    finally:
        records.close()
    (into.parent / f".{into.name}.lock").unlink(missing_ok=True)
    return report.copied


def _die_with_parent() -> None:
    """Linux: be sent SIGTERM when the serving process dies (a build nobody will adopt)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def main(argv: Sequence[str] | None = None) -> None:
    prog = "python -m cognitive_memory.replicas.index_build"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument(
        "--db", required=True, help="the SQLite file, or -: a database server's URL, read from stdin"
    )
    parser.add_argument("--into", type=Path, required=True)
    args = parser.parse_args(argv)
    _die_with_parent()
    with contextlib.suppress(OSError):
        os.nice(10)  # the serving process comes first
    try:
        source = sys.stdin.read().strip() if args.db == FROM_STDIN else args.db
        copied = build(source, args.into)
    except CognitiveMemoryError as exc:
        sys.exit(f"index build failed: {exc}")
    # Its one line goes to stderr, as everything else in the package that is not the MCP wire.
    sys.stderr.write(f"indexed {copied} vectors into {args.into}\n")


if __name__ == "__main__":
    main()
