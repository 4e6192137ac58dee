"""The composition root of the core: the only place that reads settings."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from cognitive_memory.backup.folder import BackupPlace
from cognitive_memory.core.store import StoreOfRecord
from cognitive_memory.encoding import Encoder, HashEncoder, OnnxEncoder, SentenceBertEncoder
from cognitive_memory.errors import CognitiveMemoryError
from cognitive_memory.index import ArrayVectorStore, EdgeVectorStore, VectorStore
from cognitive_memory.index.coverage import IndexCoverage
from cognitive_memory.index.edge_store import keep_shards_until_exit
from cognitive_memory.index.shared_store import SharedVectorStore
from cognitive_memory.lifecycle.forgetting import purge_expired
from cognitive_memory.replicas import FollowedLinks, FollowedRanking, FollowedWords
from cognitive_memory.replicas.index_build import BackgroundIndexer
from cognitive_memory.replicas.index_following import IndexFollower
from cognitive_memory.replicas.index_replication import background_threshold
from cognitive_memory.retrieval import RankWeights, RetrievalConfig, Retriever
from cognitive_memory.settings import Settings
from cognitive_memory.storage import opening
from cognitive_memory.storage.opening import is_server
from cognitive_memory.system import Clock, CognitiveSystem

__all__ = [
    "PROFILES",
    "backup_place",
    "build_system",
    "keep_shards_until_exit",
    "model_encoder",
    "describe_store",
    "is_server",
    "open_records",
    "open_store",
    "store_location",
    "shares_its_store",
]

EMBEDDING_DIMENSION = 384
PROFILES = ("default", "test")


def build_system(
    settings: Settings,
    profile: str = "default",
    *,
    encoder: Encoder | None = None,
    open_index_later: bool = False,
    clock: Clock | None = None,
    follow_changes: bool = False,
    follow_index: bool | None = None,
) -> CognitiveSystem:
    """Assemble stores, encoder and retriever from ``settings``. With ``open_index_later`` the
    embedded vector store opens (or reaches its owner) at its first use, not here: a server
    answers its handshake without waiting for a large shard to load. ``clock`` replaces the
    system's clock (the benchmarks' ranking dumps fix it, so recency does not drift between runs).
    With ``follow_changes`` (a process that serves many recalls) recall reads the links and the
    candidates' ranking rows and vectors from memory (``replicas.FollowedLinks``,
    ``replicas.FollowedRanking``), and the query's word counts (``replicas.FollowedWords``), built
    on threads after the first recall and kept in step by the change log; a one-shot command reads
    them from the store. With ``follow_index`` the embedded index is brought up to the store's
    change log before each recall (``replicas.IndexFollower``): other processes write the store
    without writing this index (a team's servers on one database, each with its own data
    directory). None: when the store may be written by processes that do not share this index
    (``shares_its_store``)."""
    if profile not in PROFILES:
        raise CognitiveMemoryError(
            f"Unknown profile {profile!r}; choose one of {', '.join(PROFILES)}.", code="unknown_profile"
        )
    if encoder is None:
        encoder = HashEncoder(EMBEDDING_DIMENSION) if profile == "test" else model_encoder(settings)
    with contextlib.suppress(OSError):  # the store says why it cannot open, if it cannot
        # Closed to other users: the database in it holds every memory in clear.
        settings.storage.data_dir.expanduser().mkdir(mode=0o700, parents=True, exist_ok=True)
    records = open_records(settings)
    try:
        vectors = (
            ArrayVectorStore(EMBEDDING_DIMENSION)
            if profile == "test"
            else _vector_store(settings, records, attach_now=not open_index_later)
        )
    except CognitiveMemoryError:
        records.close()
        raise
    recall = settings.recall
    config = RetrievalConfig(
        bridge_threshold=recall.bridge_threshold,
        weights=RankWeights(session_lesson_boost=recall.session_lesson_boost),
    )
    if recall.words is not None:
        config = replace(config, words_in_index=recall.words == "index")
    links = FollowedLinks(records) if follow_changes else None
    ranking = FollowedRanking(records, encoder.dimension) if follow_changes else None
    words = FollowedWords(records) if follow_changes else None
    at_hand = (ranking, words) if ranking is not None and words is not None else None
    following = shares_its_store(settings) if follow_index is None else follow_index
    storage_path = settings.storage.vector_path
    # A followed index is whole up to the change log's head before each recall (the follower
    # writes it whole when it lost its files or is an older copy): counting it against the store
    # would race other servers' writes and call it short while they write.
    coverage = None if following else IndexCoverage(vectors, records.outbox.to_be_indexed)
    retriever = Retriever(records, vectors, config, coverage, links=links, ranking=ranking, at_hand=at_hand)
    configuration = {
        "profile": profile,
        "data_dir": str(settings.storage.data_dir),
        "embedding_model": encoder.name,
        "embedding_dimensions": encoder.dimension,
        "vector_backend": _backend_name(settings, profile),
        "max_memories_per_query": recall.max_memories_per_query,
        "session_lesson_boost": recall.session_lesson_boost,
        "bridge_discovery_threshold": recall.bridge_threshold,
        "core_ratio": config.core_ratio,
        "candidate_pool": config.candidate_pool,
        "near_duplicate": settings.scope.near_duplicate,
        "trash_days": settings.storage.trash_days,
    }
    try:
        system = CognitiveSystem(
            records,
            vectors,
            encoder,
            retriever,
            configuration=configuration,
            near_duplicate=settings.scope.near_duplicate,
            clock=clock or (lambda: datetime.now(UTC)),
            followed=[replica for replica in (links, ranking, words) if replica is not None],
            backups=backup_place(settings),
            index_follower=IndexFollower(records, vectors, storage_path) if following else None,
        )
    except CognitiveMemoryError:
        vectors.close()
        records.close()
        raise
    if isinstance(vectors, SharedVectorStore):
        vectors.when_taking_over(system.replay_outbox)
    try:
        purge_expired(system, settings.storage.trash_days)
    except CognitiveMemoryError:
        system.close()
        raise
    system.words_upgrade.start(_owns_index(vectors))
    return system


def open_records(settings: Settings) -> StoreOfRecord:
    """The store of record the settings name: the PostgreSQL database of
    ``COGNITIVE_MEMORY_DATABASE_URL``, else the SQLite file (``database_path``)."""
    return open_store(store_location(settings), settings.storage.data_dir)


def store_location(settings: Settings) -> str:
    """Where the settings put the store of record: the database server's URL, or the SQLite file."""
    url = settings.storage.database_url
    if url is not None:
        return url.get_secret_value()
    return str(settings.storage.database_path.expanduser().absolute())


def open_store(location: str, data_dir: Path | None = None) -> StoreOfRecord:
    """The store of record at ``location``: a PostgreSQL database (a ``postgresql://`` URL) or a
    SQLite file (made if missing); what goes beside a server's store goes in ``data_dir``."""
    return opening.open_store(location, data_dir)


def describe_store(where: Settings | str) -> str:
    """The store of record the settings name, or at a location, as messages may show it: the
    database server's URL without its password, or the SQLite file's absolute path."""
    return opening.named(store_location(where) if isinstance(where, Settings) else where)


def backup_place(settings: Settings) -> BackupPlace:
    """Where snapshots of the store go (``<data dir>/backups``), and what they copy."""
    url = settings.storage.database_url
    return BackupPlace(
        settings.storage.data_dir.expanduser(),
        settings.storage.database_path,
        url.get_secret_value() if url is not None else None,
    )


def shares_its_store(settings: Settings) -> bool:
    """Whether processes that do not share this one's embedded index may write its store of
    record: the store is a database server, or a SQLite file outside the data directory (whose
    index, in the data directory, other data directories' processes do not reach). Never with a
    Qdrant server, which every process writes."""
    storage = settings.storage
    if storage.qdrant_url:
        return False
    if storage.database_url is not None:
        return True
    data_dir = storage.data_dir.expanduser().resolve()
    return storage.database_path.expanduser().resolve().parent != data_dir


def model_encoder(settings: Settings) -> SentenceBertEncoder | OnnxEncoder:
    """The configured model on ONNX Runtime (CPU; torch serves until the export exists) or on torch."""
    cfg = settings.encoder
    torch_encoder = SentenceBertEncoder(
        cfg.model, dimension=EMBEDDING_DIMENSION, device=cfg.device, threads=cfg.threads
    )
    if cfg.backend == "torch" or cfg.device != "cpu":
        return torch_encoder
    return OnnxEncoder(torch_encoder, cfg.cache_dir, threads=cfg.threads)


def _owns_index(vectors: VectorStore) -> Callable[[], bool]:
    """Whether this process owns the index (the words of an older store are built there): the
    embedded shard's opener; any process of a Qdrant server."""
    if isinstance(vectors, SharedVectorStore):
        return lambda: vectors.is_owner
    return lambda: True


def _backend_name(settings: Settings, profile: str) -> str:
    if profile == "test":
        return "array"
    return "qdrant" if settings.storage.qdrant_url else "qdrant-edge"


def _vector_store(settings: Settings, records: StoreOfRecord, *, attach_now: bool = True) -> VectorStore:
    storage = settings.storage
    if storage.qdrant_url:
        from cognitive_memory.index.qdrant_store import QdrantServerVectorStore

        key = storage.qdrant_api_key.get_secret_value() if storage.qdrant_api_key else None
        return QdrantServerVectorStore.connect(
            storage.qdrant_url, key, storage.qdrant_collection, EMBEDDING_DIMENSION
        )
    path, location = storage.vector_path, store_location(settings)
    # A server's store has no file to count from: the index builder asks the open store.
    counted = records.outbox.to_be_indexed if is_server(location) else None
    return SharedVectorStore(
        lambda: _open_edge(path, location, counted), storage.socket_path, attach_now=attach_now
    )


def _open_edge(path: Path, location: str, counted: Callable[[], int] | None) -> EdgeVectorStore:
    """The embedded shard, its index kept up to date in the background (background_index)."""
    store = EdgeVectorStore(path, EMBEDDING_DIMENSION)
    BackgroundIndexer(store, location, background_threshold, to_be_indexed=counted)
    return store
