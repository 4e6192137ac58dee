"""A Qdrant server (or cluster) through qdrant-client: how a user outgrows one machine."""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, TypeVar

from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from cognitive_memory.core.memory import Vector
from cognitive_memory.errors import IndexMismatchError, StorageError
from cognitive_memory.index.sparse import WORDS, SparseVector
from cognitive_memory.index.vector_store import (
    INDEXED_FIELDS,
    SEARCH_EF,
    SESSION_FIELD,
    VectorFilter,
    VectorHit,
    VectorPoint,
    VectorStoreInfo,
    check_points,
    is_point_id,
)

__all__ = ["QdrantServerVectorStore"]

T = TypeVar("T")

_SCHEMA = {
    "integer": models.PayloadSchemaType.INTEGER,
    "keyword": models.PayloadSchemaType.KEYWORD,
    "float": models.PayloadSchemaType.FLOAT,
}
logger = logging.getLogger(__name__)

# How often calls try a Qdrant server that did not answer before failing at once.
RETRY_SECONDS = 5.0
_CLIENT_ERRORS = (UnexpectedResponse, ResponseHandlingException, OSError, ValueError)
_ID_PAGE = 1000  # point ids per scroll page
# The collection's metadata key that marks every point's payload as holding its session
# (``has_sessions``): kept with the collection, as a payload index is, and read back by local mode
# too, which keeps no payload index.
SESSIONS_MARK = "sessions_in_payload"
# While a collection lacks the mark, how often ``has_sessions`` asks again (seconds): another
# process (``doctor --repair``, ``qdrant migrate``) may write it.
SESSIONS_RECHECK_SECONDS = 30.0


class QdrantServerVectorStore:
    """One collection (384-d, cosine, indexed payload fields) reached through ``client``.

    ``location`` names the server for status output. The same class runs against
    ``QdrantClient(path=...)`` in tests, which speaks the same client API as a server.
    """

    def __init__(
        self,
        client: QdrantClient,
        collection: str,
        location: str,
        dimension: int = 384,
        *,
        search_ef: int | None = None,
    ) -> None:
        self._client = client
        self._collection = collection
        self._location = location
        self._dimension = dimension
        self._search_ef = search_ef  # None: the client's default (local mode searches exactly)
        self._words = True  # the collection has the words vector (see _add_words)
        self._sessions = False  # the collection has SESSIONS_MARK (see has_sessions)
        self._sessions_at = -float("inf")
        self._ready = False
        self._next_try = 0.0
        self._failure = f"Qdrant at {location} did not answer"
        try:
            self._ready_collection()
        except IndexMismatchError:
            raise
        except StorageError as exc:
            # A server that is down is not a reason to refuse to start: stores queue in SQLite's
            # outbox and recall goes by words until it answers (each call tries it again).
            logger.warning("%s; stores are queued and recall uses words until it answers", exc.message)

    @classmethod
    def connect(
        cls, url: str, api_key: str | None, collection: str, dimension: int = 384
    ) -> QdrantServerVectorStore:
        """Connect to the server at ``url`` (with an optional API key)."""
        # The client's own version check warns from a background thread when the server is down;
        # `memory_system qdrant status` and doctor report the server's version instead.
        client = QdrantClient(url=url, api_key=api_key, timeout=10, check_compatibility=False)
        return cls(client, collection, url, dimension, search_ef=SEARCH_EF)

    def _ready_collection(self) -> None:
        """Make sure the collection exists, once; while the server is unreachable, ask again at
        most every ``RETRY_SECONDS`` (in between, fail at once rather than wait for a timeout)."""
        if self._ready:
            return
        now = time.monotonic()
        if now < self._next_try:
            raise StorageError(f"{self._failure} (tried again every {RETRY_SECONDS:.0f} s)")
        self._next_try = now + RETRY_SECONDS
        try:
            self._translated(self._ensure_collection)
        except StorageError as exc:
            self._failure = exc.message
            raise
        self._ready = True

    def _ensure_collection(self) -> None:
        if self._client.collection_exists(self._collection):
            config = self._client.get_collection(self._collection).config
            self._sessions = self._marked(config)
            params = config.params
            found = params.vectors.size if isinstance(params.vectors, models.VectorParams) else None
            if found != self._dimension:
                raise IndexMismatchError(
                    f"Collection {self._collection!r} at {self._location} holds {found}-d vectors, "
                    f"not {self._dimension}-d: use another collection or rebuild it with `doctor --repair`.",
                )
            if WORDS not in (params.sparse_vectors or {}):
                self._add_words()
            return
        self._client.create_collection(
            self._collection,
            vectors_config=models.VectorParams(size=self._dimension, distance=models.Distance.COSINE),
            sparse_vectors_config={WORDS: models.SparseVectorParams(modifier=models.Modifier.IDF)},
        )
        for name, kind in INDEXED_FIELDS.items():
            self._index_field(name, kind)
        self._mark_sessions()  # empty: every point it will hold is written with its session

    def _index_field(self, name: str, kind: str) -> None:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Payload indexes have no effect in the local Qdrant")
            self._client.create_payload_index(self._collection, name, _SCHEMA[kind])

    def has_sessions(self) -> bool:
        """Whether the collection's metadata holds ``SESSIONS_MARK``: set when it is made, or once
        every point was written again with its session (``mark_sessions``). Kept once seen; while
        missing, asked again at most every ``SESSIONS_RECHECK_SECONDS``."""
        if self._sessions or time.monotonic() - self._sessions_at < SESSIONS_RECHECK_SECONDS:
            return self._sessions
        self._sessions_at = time.monotonic()  # a failure below waits as long
        collection = self._guard(lambda: self._client.get_collection(self._collection))
        self._sessions = self._marked(collection.config)
        return self._sessions

    def _marked(self, config: models.CollectionConfig) -> bool:
        """Whether ``config``'s metadata holds ``SESSIONS_MARK`` (looked at now)."""
        self._sessions_at = time.monotonic()
        return bool((config.metadata or {}).get(SESSIONS_MARK))

    def mark_sessions(self) -> None:
        self._guard(lambda: self._index_field(SESSION_FIELD, INDEXED_FIELDS[SESSION_FIELD]))
        self._guard(self._mark_sessions)

    def _mark_sessions(self) -> None:
        """Write ``SESSIONS_MARK``; a server that keeps no collection metadata
        (an older one) refuses it, and a session filter then goes by the ids SQLite lists."""
        try:
            self._client.update_collection(self._collection, metadata={SESSIONS_MARK: True})
        except _CLIENT_ERRORS as exc:
            logger.warning(
                "Qdrant at %s cannot mark the sessions in the payload (%s); session filters go by ids",
                self._location,
                exc,
            )
            return
        self._sessions = True

    def _add_words(self) -> None:
        """Give a collection made before words were indexed their sparse vector; its points get
        words as they are written again. A server older than 1.18 cannot add it: the collection
        then serves without words (written without them, never matched by them)."""
        words = models.SparseVectorConfig(modifier=models.Modifier.IDF)
        try:
            self._client.create_vector_name(
                self._collection, WORDS, models.SparseVectorNameConfig(sparse=words)
            )
        except _CLIENT_ERRORS as exc:
            logger.warning(
                "Qdrant at %s cannot add the words vector (%s); words stay in SQLite", self._location, exc
            )
            self._words = False

    def upsert(self, points: Sequence[VectorPoint]) -> None:
        if not points:
            return
        check_points(points, self._dimension)
        structs = [
            models.PointStruct(id=p.id, vector=_vectors_of(p, self._words), payload=dict(p.payload))
            for p in points
        ]
        self._guard(lambda: self._client.upsert(self._collection, structs, wait=True))

    def delete(self, ids: Sequence[str]) -> None:
        held = [point_id for point_id in ids if is_point_id(point_id)]
        if held:
            selector = models.PointIdsList(points=list(held))
            self._guard(lambda: self._client.delete(self._collection, selector, wait=True))

    def update_words(self, words: Mapping[str, SparseVector]) -> list[str]:
        # Qdrant refuses an update naming a point it lacks: ask which it holds first.
        asked: list[Any] = [point_id for point_id in words if is_point_id(point_id)]
        records = self._guard(lambda: self._client.retrieve(self._collection, asked)) if asked else []
        held = {str(record.id) for record in records}
        if self._words:
            self._write_words({point_id: words[point_id] for point_id in held})
        return [point_id for point_id in words if point_id not in held]

    def _write_words(self, words: Mapping[str, SparseVector]) -> None:
        worded = [
            models.PointVectors(id=point_id, vector={WORDS: _client_words(held)})
            for point_id, held in words.items()
            if held
        ]
        unworded: list[Any] = [point_id for point_id, held in words.items() if not held]
        if worded:
            self._guard(lambda: self._client.update_vectors(self._collection, worded, wait=True))
        if unworded:
            self._guard(lambda: self._client.delete_vectors(self._collection, [WORDS], unworded, wait=True))

    def search(
        self, vector: Vector, limit: int, where: VectorFilter | None = None, *, precise: bool = False
    ) -> list[VectorHit]:
        request = self._nearest(vector, limit, where, precise)
        (response,) = self._guard(lambda: self._client.query_batch_points(self._collection, [request]))
        return _hits(response)

    def search_many(
        self, vectors: Sequence[Vector], limit: int, where: VectorFilter | None = None
    ) -> list[list[VectorHit]]:
        if not vectors:
            return []
        requests = [self._nearest(vector, limit, where, False) for vector in vectors]
        return [
            _hits(found)
            for found in self._guard(lambda: self._client.query_batch_points(self._collection, requests))
        ]

    def search_with_words(
        self,
        vector: Vector,
        words: SparseVector,
        limit: int,
        where: VectorFilter | None = None,
        *,
        precise: bool = False,
    ) -> tuple[list[VectorHit], list[VectorHit]]:
        if not words or not self._words:
            return self.search(vector, limit, where, precise=precise), []
        matches = models.QueryRequest(
            query=models.SparseVector(indices=list(words.indices), values=list(words.values)),
            using=WORDS,
            limit=limit,
            filter=_client_filter(where),
            with_payload=False,
        )
        requests = [self._nearest(vector, limit, where, precise), matches]
        nearest, matched = self._guard(lambda: self._client.query_batch_points(self._collection, requests))
        return _hits(nearest), _hits(matched)

    def _nearest(
        self, vector: Vector, limit: int, where: VectorFilter | None, precise: bool
    ) -> models.QueryRequest:
        wide = precise and self._search_ef
        return models.QueryRequest(
            query=vector.tolist(),
            limit=limit,
            filter=_client_filter(where),
            params=models.SearchParams(hnsw_ef=max(self._search_ef or 0, limit)) if wide else None,
            with_payload=False,
        )

    def count(self) -> int:
        return self._guard(lambda: self._client.count(self._collection, exact=True).count)

    def ids(self) -> list[str]:
        """Every point id, scrolled a page at a time."""
        found: list[str] = []
        offset: models.ExtendedPointId | None = None
        while True:
            records, offset = self._guard(partial(self._scroll_page, offset))
            found.extend(str(record.id) for record in records)
            if offset is None:
                return found

    def _scroll_page(
        self, offset: models.ExtendedPointId | None
    ) -> tuple[list[models.Record], models.ExtendedPointId | None]:
        return self._client.scroll(
            self._collection, limit=_ID_PAGE, offset=offset, with_payload=False, with_vectors=False
        )

    def info(self) -> VectorStoreInfo:
        collection = self._guard(lambda: self._client.get_collection(self._collection))
        details = {"collection": self._collection, "status": str(collection.status.value)}
        return VectorStoreInfo("qdrant", "server", self._location, "ok", self.count(), 0, details)

    def build_index(self, min_unindexed: int) -> bool:
        """A Qdrant server's optimizers index in the background by themselves."""
        return False

    def close(self) -> None:
        self._client.close()

    def _guard(self, call: Callable[[], T]) -> T:
        """``call`` on a ready collection; client failures become StorageError."""
        self._ready_collection()
        return self._translated(call)

    def _translated(self, call: Callable[[], T]) -> T:
        try:
            return call()
        except _CLIENT_ERRORS as exc:
            raise StorageError(f"Qdrant at {self._location} failed: {exc}") from exc


def _hits(response: models.QueryResponse) -> list[VectorHit]:
    return [VectorHit(str(point.id), float(point.score)) for point in response.points]


def _vectors_of(point: VectorPoint, with_words: bool) -> Any:
    """The point's dense vector, with its words as the named sparse vector when it has any (and
    the collection has the words vector)."""
    if not point.words or not with_words:
        return point.vector.tolist()
    return {"": point.vector.tolist(), WORDS: _client_words(point.words)}


def _client_words(words: SparseVector) -> models.SparseVector:
    return models.SparseVector(indices=list(words.indices), values=list(words.values))


def _client_filter(where: VectorFilter | None) -> models.Filter | None:
    if where is None or where.is_empty():
        return None
    must: list[Any] = [
        models.FieldCondition(key=name, match=models.MatchAny(any=list(values)))
        for name, values in where.conditions().items()
    ]
    if where.has_range:
        span = models.Range(gte=where.created_after, lt=where.created_before)
        must.append(models.FieldCondition(key="created_at", range=span))
    if where.ids is not None:
        must.append(models.HasIdCondition(has_id=list(where.ids)))
    return models.Filter(must=must)
