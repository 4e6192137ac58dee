"""CognitiveSystem: store, recall and report, over SQLite, a vector index and an encoder."""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

from cognitive_memory.backup.folder import BackupPlace
from cognitive_memory.browsing import Browsing
from cognitive_memory.core.levels import classify
from cognitive_memory.core.memory import DEFAULT_PROJECT, CognitiveMemory, SourceKind, Vector
from cognitive_memory.core.metadata import check_fields
from cognitive_memory.core.records import MemoryEdit, check_kind, check_level, new_memory
from cognitive_memory.core.store import StoreOfRecord
from cognitive_memory.core.uses import Use
from cognitive_memory.core.validation import (
    MAX_QUERY_CHARS,
    check_importance,
    check_key,
    check_metadata,
    check_tags,
    check_text,
)
from cognitive_memory.editing import Edits
from cognitive_memory.encoding.base import Encoder
from cognitive_memory.errors import CognitiveMemoryError, IndexMismatchError, InvalidInputError, StorageError
from cognitive_memory.index.opening import OPEN_AFTER, IndexOpener
from cognitive_memory.index.shared_store import SharedVectorStore
from cognitive_memory.index.vector_store import VectorFilter, VectorHit, VectorStore, VectorStoreInfo
from cognitive_memory.outcomes import StoreOutcome, SystemStatus
from cognitive_memory.processes import yield_cpu
from cognitive_memory.replicas import FollowedTable
from cognitive_memory.replicas.index_following import IndexFollower
from cognitive_memory.replicas.index_replication import IndexReplication
from cognitive_memory.replicas.index_words import WordsUpgrade
from cognitive_memory.retrieval.results import RetrievalResult
from cognitive_memory.retrieval.retriever import Retriever
from cognitive_memory.sync import LoadedSources
from cognitive_memory.use_log import UseLog

__all__ = ["CognitiveSystem"]

logger = logging.getLogger(__name__)

Clock = Callable[[], datetime]

# A store reports up to this many near duplicates (at or above ``near_duplicate`` cosine).
SIMILAR_LIMIT = 3
NEAR_DUPLICATE = 0.92


class CognitiveSystem:
    """The memory engine. Built by ``cognitive_memory.main.build_system``."""

    def __init__(
        self,
        records: StoreOfRecord,
        vectors: VectorStore,
        encoder: Encoder,
        retriever: Retriever,
        *,
        configuration: Mapping[str, Any] | None = None,
        clock: Clock = lambda: datetime.now(UTC),
        retry_seconds: float = 30.0,
        near_duplicate: float = NEAR_DUPLICATE,
        followed: Sequence[FollowedTable[Any]] = (),
        backups: BackupPlace | None = None,
        index_follower: IndexFollower | None = None,
    ) -> None:
        """``followed``: the tables recall reads from memory (the retriever's), if it does;
        ``backups``: where snapshots of the database go (default: ``backups`` beside it);
        ``index_follower``: brings this process's index up to the store's change log before each
        recall, when other processes write the store without writing this index (a team's
        servers on one PostgreSQL database, each with its embedded index)."""
        self.records = records
        self.backups = backups or BackupPlace(records.path.parent, records.path)
        self.followed = tuple(followed)
        self.index_follower = index_follower
        self.vectors = vectors
        self.encoder = encoder
        self.retriever = retriever
        self.configuration = dict(configuration or {})
        self.near_duplicate = near_duplicate
        self._clock = clock
        self._bookkeeping = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-bookkeeping")
        # Uses are written on a thread that yields the CPU to recalls (use_log).
        self._use_writer = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="memory-uses", initializer=yield_cpu
        )
        self.uses = UseLog(lambda batch: self._record_uses(batch), self._use_writer)
        self.replication = IndexReplication(records, vectors, self._bookkeeping, retry_seconds=retry_seconds)
        self.loaded = LoadedSources(records, encoder, self.replication, clock, self._record_encoder)
        self.edits = Edits(records, encoder, self.replication, clock)
        self.browsing = Browsing(records)
        self.words_upgrade = WordsUpgrade(records, vectors)  # started by build_system
        self._index_opener = IndexOpener(vectors, retriever.coverage)
        self._warming_up: threading.Thread | None = None
        self._following = False
        self._follow_lock = threading.Lock()
        self._check_encoder_matches_index()
        self.replay_outbox()

    @property
    def retry_seconds(self) -> float:
        """Seconds between retries of vector writes the index refused."""
        return self.replication.retry_seconds

    def _check_encoder_matches_index(self) -> None:
        """Refuse an encoder other than the one whose vectors the store holds. The signature is
        recorded with the first stored memory, so a misconfigured model that never loads cannot
        claim an empty store."""
        signature = f"{self.encoder.name}:{self.encoder.dimension}"
        recorded = self.records.properties.get("encoder")
        self._encoder_recorded = recorded is not None
        if recorded is not None and recorded != signature:
            raise IndexMismatchError(
                f"This store was built with encoder {recorded}, but {signature} is configured. "
                "Use the original model (SENTENCE_BERT_MODEL) or another data directory.",
            )

    def warm_up_in_background(self) -> threading.Thread:
        """Start loading the encoder so the first store or recall does not wait for it; once (a
        later call returns the thread of the first)."""

        def load() -> None:
            try:
                self.encoder.warm_up()
            except CognitiveMemoryError as exc:
                logger.error("Embedding model failed to load: %s", exc)

        if self._warming_up is None:
            self._warming_up = threading.Thread(target=load, name="encoder-warm-up", daemon=True)
            self._warming_up.start()
        return self._warming_up

    def open_index_in_background(self) -> None:
        """Open the vector index ahead of its first use (see ``IndexOpener``); a server calls this
        once its first answer is out."""
        self._index_opener.open_in_background()

    def store(
        self,
        text: str,
        *,
        hierarchy_level: int | None = None,
        memory_type: str | None = None,
        importance_score: float | None = None,
        tags: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        source_date: datetime | None = None,
        session_id: str | None = None,
        project: str = DEFAULT_PROJECT,
        source: SourceKind = SourceKind.BY_HAND,
        speaker: str | None = None,
        key: str | None = None,
        fields: Mapping[str, Any] | None = None,
        dry_run: bool = False,
    ) -> StoreOutcome:
        """Validate, embed, commit to SQLite, then index the vector (queued if the index fails).

        Memories stored in sequence with the same ``session_id`` become neighbours in time. The
        same text (whitespace and case aside) already in ``project`` is not stored again: its
        access is refreshed and it comes back as a duplicate (taking ``key`` if it had none). A
        ``key`` held in ``project`` updates its memory instead: the text and the fields given
        (None: not given). ``fields`` are the caller's own fields (``core/metadata.py``), kept
        in ``metadata`` beside the system's keys; under a held key they replace the memory's.
        ``dry_run`` writes nothing and says what the store would do.
        """
        content = check_text(text)
        level, kind = classify(content, check_level(hierarchy_level), check_kind(memory_type))
        importance = check_importance(0.5 if importance_score is None else importance_score)
        labels, extra = check_tags(tags or ()), check_metadata(metadata)
        own = check_fields(fields) if fields is not None else None
        named = check_key(key) if key is not None else None
        edit = MemoryEdit(content, tags, importance_score, hierarchy_level, memory_type, extra or None, own)
        extra = {**extra, **own} if own else extra
        held = self._holder(named, project)
        if held is not None:
            return self._store_over(held, edit, session_id, dry_run)
        existing = self.records.memories.find_same_text(content, project)
        if existing is not None:
            return self._already_stored(existing, named, dry_run)
        vector = self.encoder.encode([content])[0]
        memory = new_memory(
            content,
            vector,
            level,
            kind,
            self._clock(),
            importance,
            labels,
            extra,
            source_date,
            session_id,
            project,
        )
        memory = dataclasses.replace(memory, source=source, speaker=speaker, key=named)
        return self._add(memory, vector, edit, dry_run)

    def _add(self, memory: CognitiveMemory, vector: Vector, edit: MemoryEdit, dry_run: bool) -> StoreOutcome:
        """Commit a new memory (unless ``dry_run``) with its novelty and near duplicates; its key
        taken by another store meanwhile makes it an update of that one."""
        novelty, similar, nearest = self._novelty(vector, memory.project)
        if dry_run:
            return StoreOutcome(memory, novelty=novelty, similar=similar, nearest=nearest)
        try:
            outcome = self._commit([memory])[0]
        except StorageError:
            held = self._holder(memory.key, memory.project)
            if held is None:
                raise
            return self._store_over(held, edit, memory.session_id, dry_run)
        return dataclasses.replace(outcome, novelty=novelty, similar=similar, nearest=nearest)

    def _holder(self, key: str | None, project: str) -> CognitiveMemory | None:
        """The memory of ``project`` holding ``key``, if any."""
        return next(iter(self.records.memories.keyed([key], [project])), None) if key else None

    def _store_over(
        self, held: CognitiveMemory, edit: MemoryEdit, session_id: str | None, dry_run: bool
    ) -> StoreOutcome:
        """A store under the key ``held`` holds: an update of it (or, in a dry run, its plan)."""
        if not dry_run:
            done = self.edits.update(held.id, edit, session_id=session_id)
            changed = bool(done.changed)
            return StoreOutcome(done.memory, done.queued, not changed, updated=changed, version=done.version)
        _, memory, changed_fields = self.edits.plan(held.id, edit)
        vector = held.cognitive_embedding
        if "content" in changed_fields or vector is None:
            vector = self.encoder.encode([memory.content])[0]
        novelty, similar, nearest = self._novelty(vector, held.project, excluding=held.id)
        return StoreOutcome(
            memory,
            duplicate=not changed_fields,
            novelty=novelty,
            similar=similar,
            nearest=nearest,
            updated=bool(changed_fields),
        )

    def _already_stored(self, existing: CognitiveMemory, key: str | None, dry_run: bool) -> StoreOutcome:
        """The memory already holding a text stored again; it takes ``key`` if it had none."""
        if key is not None and existing.key != key:
            if existing.key is not None or not (dry_run or self.records.memories.set_key(existing.id, key)):
                raise InvalidInputError(
                    f"Memory {existing.id} already holds this text"
                    + (f" under the key {existing.key!r}" if existing.key else "")
                    + ": store under its key, or change one of the two texts.",
                    code="duplicate",
                )
            existing = dataclasses.replace(existing, key=key)
            if not dry_run:  # the key's words are the memory's now (terms.keyed_text)
                self.replication.index([existing])
        if not dry_run:
            self.uses.add(Use((existing.id,), (), self._clock(), time.time()))
        return StoreOutcome(existing, duplicate=True, novelty=0.0)

    def _novelty(
        self, vector: Vector, project: str, excluding: str | None = None
    ) -> tuple[float | None, tuple[VectorHit, ...], VectorHit | None]:
        """1 minus the highest cosine to a memory of ``project`` (other than ``excluding``), within
        0..1 (a memory pointing away is no more novel than none), the near duplicates, and the
        nearest memory whatever its cosine."""
        if not self._index_caught_up():  # near duplicates stored by other servers count too
            return None, (), None
        try:
            where = self.records.memories.index_filter(VectorFilter(projects=(project,)))
            hits = self.vectors.search(vector, SIMILAR_LIMIT + (excluding is not None), where)
        except StorageError:
            return None, (), None
        hits = [hit for hit in hits if hit.id != excluding][:SIMILAR_LIMIT]
        if not hits:
            return 1.0, (), None
        similar = tuple(hit for hit in hits if hit.score >= self.near_duplicate)
        return min(1.0, max(0.0, 1.0 - hits[0].score)), similar, hits[0]

    def store_many(self, texts: Sequence[str], *, session_id: str | None = None) -> list[StoreOutcome]:
        """Store texts in order with one batched embedding and one SQLite transaction (the bulk
        path of loaders and benchmarks). Placement follows the rule; any invalid text refuses all."""
        contents = [check_text(text) for text in texts]
        if not contents:
            return []
        vectors = self.encoder.encode(contents)
        now = self._clock()
        batch = [
            new_memory(content, vector, *classify(content), now, 0.5, (), {}, None, session_id)
            for content, vector in zip(contents, vectors, strict=True)
        ]
        return self._commit(batch)

    def _commit(self, batch: list[CognitiveMemory]) -> list[StoreOutcome]:
        """Commit to SQLite (the acknowledgement), then index the vectors (queued if that fails)."""
        self.records.memories.add(batch)
        queued = not self._after_commit(batch)
        return [StoreOutcome(memory, queued) for memory in batch]

    def _after_commit(self, batch: list[CognitiveMemory]) -> bool:
        """Record the encoder and index the committed ``batch``; False when that failed (a full
        disk): the memories are stored all the same, and their queued index writes are replayed."""
        try:
            self._record_encoder()
            return self._index(batch)
        except StorageError as exc:
            logger.warning("Stored; the vector index write is queued for replay: %s", exc.message)
            return False

    def _record_encoder(self) -> None:
        if not self._encoder_recorded:
            self.records.properties.set("encoder", f"{self.encoder.name}:{self.encoder.dimension}")
            self._encoder_recorded = True

    def _index(self, memories: Sequence[CognitiveMemory]) -> bool:
        return self.replication.index(memories)

    def delete(self, ids: Sequence[str]) -> list[str]:
        """Forget memories everywhere; returns the ids that existed. The index deletion is queued
        in SQLite first, so a failure of the index is replayed like any other vector write."""
        existing = self.records.memories.delete(list(dict.fromkeys(ids)))
        if existing:
            self._unindex(existing)
        return existing

    def _unindex(self, ids: list[str]) -> bool:
        return self.replication.unindex(ids)

    def replay_outbox(self) -> int:
        """Apply vector writes that SQLite committed but the index never confirmed (see
        ``IndexReplication.replay_outbox``); returns how many were pending."""
        return self.replication.replay_outbox()

    def rebuild_index(self) -> int:
        """Rewrite the vector index from the vectors SQLite keeps (nothing is re-embedded); returns
        the number of vectors written."""
        self.flush()
        written = self.replication.rebuild()
        if self.retriever.coverage is not None:
            self.retriever.coverage.look()  # whole again: recall searches the words there again
        return written

    def retrieve(
        self,
        query: str,
        *,
        max_results: int = 10,
        include_bridges: bool = True,
        where: VectorFilter | None = None,
        max_total: int | None = None,
        explain: Sequence[str] = (),
    ) -> RetrievalResult:
        """Core, peripheral and bridge memories for ``query``; access counts update afterwards.
        ``max_total`` caps all of them together (bridges take what the ranked memories leave);
        ``explain``: ids of memories to say why they ranked where they did."""
        cue = check_text(query, field="query", limit=MAX_QUERY_CHARS)
        if isinstance(max_results, bool) or not isinstance(max_results, int) or max_results < 1:
            raise InvalidInputError(
                "`max_results` must be a whole number of at least 1.", code="out_of_range"
            )
        now = self._clock()
        vector = self.encoder.encode([cue])[0]
        behind = not self._index_caught_up()
        result = self.retriever.retrieve(
            cue,
            vector,
            max_results=max_results,
            include_bridges=include_bridges,
            now=now,
            where=where,
            max_total=max_total,
            explain=explain,
        )
        if behind and not result.degraded:
            result = dataclasses.replace(result, degraded=True)
        if result.memory_ids():
            # Only core memories count as used (access count, last access, hence strength): the
            # peripheral and bridge memories were offered, not necessarily used.
            core = tuple(ranked.memory.id for ranked in result.core)
            self.uses.add(Use(core, core, now, time.time()))
        self._follow()
        return result

    def _index_caught_up(self) -> bool:
        """Bring the index up to the writes of other processes (``index_follower``); False when
        it could not be, and the recall says ``degraded``."""
        if self.index_follower is None:
            return True
        try:
            self.index_follower.catch_up()
        except StorageError as exc:
            logger.warning("The vector index may miss other servers' latest writes: %s", exc.message)
            return False
        return True

    def _follow(self) -> None:
        """After the first recall, build the tables recall reads from memory (``followed``) on
        threads, those never built: built from the start they took the CPU from the handshake and
        the model's load, and the first recall reads the store either way."""
        with self._follow_lock:
            if self._following:
                return
            self._following = True
        for replica in self.followed:
            if replica.state == "building":
                replica.build_in_background(delay=OPEN_AFTER)

    def now(self) -> datetime:
        """The time by this system's clock: what strength and recency are computed at."""
        return self._clock()

    def open(self, ids: Sequence[str]) -> list[CognitiveMemory]:
        """The memories with these ids, as ``records.memories.get`` gives them, each counted as used (its
        access count and last access update after answering, so its strength rises)."""
        found = self.records.memories.get(ids)
        if found:
            self.uses.add(Use(tuple(m.id for m in found), (), self._clock(), time.time()))
        return found

    def _record_uses(self, uses: Sequence[Use]) -> None:
        """Count the uses and strengthen the links between memories recalled together as core
        (``use_log.UseLog`` calls this behind recall)."""
        try:
            self.records.memories.record_uses(uses)
            self.records.changes.trim()
        except StorageError as exc:
            logger.warning("Could not record memory access: %s", exc)

    def build_index(self) -> bool:
        """After a bulk write: build the approximate vector index if enough vectors lack it."""
        return self.replication.build_index()

    def flush(self) -> None:
        """Have pending bookkeeping writes (access counts, co-recall links, confirmed outbox rows)
        land."""
        try:
            self.uses.flush()
            landed = self._bookkeeping.submit(lambda: None)
        except RuntimeError:  # closed: ``close`` wrote them (a signal can race stdin's end)
            return
        landed.result()

    def wind_down(self) -> None:
        """Before a signal ends the process without closing: let the bookkeeping writes land, and
        stop serving the vector index to other processes (its socket goes; they take the index
        over once this process is gone)."""
        self.flush()
        if isinstance(self.vectors, SharedVectorStore):
            self.vectors.stop_serving()

    def status(self) -> SystemStatus:
        """Raises StorageError when the data directory was deleted under this process."""
        self.records.check_in_place()
        self.flush()
        counts = self.records.memories.counts()
        info: VectorStoreInfo | None = None
        error: str | None = None
        try:
            info = self.vectors.info()
        except StorageError as exc:
            error = exc.message
        pending = len(self.records.outbox.pending())
        return SystemStatus(
            counts=counts,
            vector_store=info,
            vector_store_error=error,
            pending_vector_writes=pending,
            activity=self.records.properties.activity(),
            database_path=self.records.where,
            database_bytes=self.records.size_bytes(),
            encoder_name=self.encoder.name,
            encoder_ready=self.encoder.is_ready,
            configuration=dict(self.configuration),
            words_index=self.words_upgrade.progress(),
            words_reweighing=self.words_upgrade.reweigh_progress(),
            recall_state={replica.name: replica.state for replica in self.followed},
        )

    def _trim_change_log(self) -> None:
        """Keep the change log short (``ChangeLog.trim``) after a bulk write; a failure (a full
        disk) only leaves it longer."""
        try:
            self.records.changes.trim()
        except StorageError as exc:
            logger.debug("The change log was not trimmed: %s", exc.message)

    def close(self) -> None:
        """Let the bookkeeping writes land, then close the index and the database (the database
        even when closing the index fails; its ``StorageError`` is raised then)."""
        self._index_opener.close()
        self.words_upgrade.close()
        self.replication.close()
        self.uses.flush()
        self._use_writer.shutdown(wait=True)
        self._bookkeeping.shutdown(wait=True)
        self._trim_change_log()
        try:
            self.vectors.close()
        finally:
            self.records.close()
