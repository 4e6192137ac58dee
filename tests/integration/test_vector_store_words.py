"""The behaviour suite for words (sparse vectors beside the dense ones) in every VectorStore:
Qdrant Edge, qdrant-client (local mode, as a server would answer), in-memory."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import qdrant_edge as qe
from qdrant_client import QdrantClient, models

from cognitive_memory.core.terms import terms
from cognitive_memory.index import ArrayVectorStore, EdgeVectorStore, VectorFilter, VectorPoint, VectorStore
from cognitive_memory.index.qdrant_store import QdrantServerVectorStore
from cognitive_memory.index.sparse import SparseVector, document_vector, query_vector, term_id
from cognitive_memory.index.vector_store import idf

DIM = 8
TEXTS = {
    "dogs": "The dogs barked at the postman all morning",
    "cat": "My cat sleeps on the warm laptop keyboard",
    "postman": "The postman delivered a parcel for the neighbours",
    "garden": "We planted tomatoes and basil in the garden",
    "barking": "Barking dogs kept the whole street awake",
}
AVERAGE = 8.0


def _open(kind: str, tmp_path: Path) -> VectorStore:
    if kind == "edge":
        return EdgeVectorStore(tmp_path / "edge", DIM)
    if kind == "qdrant-client":
        return QdrantServerVectorStore(QdrantClient(path=str(tmp_path / "qc")), "memories", "local", DIM)
    return ArrayVectorStore(DIM)


@pytest.fixture(params=["edge", "qdrant-client", "array"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorStore]:
    opened = _open(request.param, tmp_path)
    yield opened
    opened.close()


def _vector(seed: int) -> np.ndarray:
    raw = np.random.default_rng(seed).normal(size=DIM).astype(np.float32)
    return raw / np.linalg.norm(raw)


def _point(name: str, seed: int, project: str = "default") -> VectorPoint:
    identifier = str(uuid.uuid5(uuid.NAMESPACE_URL, name))
    words = document_vector(terms(TEXTS[name]), [], AVERAGE)
    return VectorPoint(identifier, _vector(seed), {"project": project}, words)


@pytest.fixture
def worded(store: VectorStore) -> dict[str, str]:
    points = [_point(name, seed) for seed, name in enumerate(TEXTS)]
    store.upsert(points)
    return {point.id: name for point, name in zip(points, TEXTS, strict=True)}


def _bm25(query: SparseVector, documents: dict[str, SparseVector]) -> dict[str, float]:
    """What the IDF modifier makes of the weights: the sum of query weight x IDF x weight."""
    holding = {t: sum(t in d.indices for d in documents.values()) for t in query.indices}
    scores = {}
    for name, document in documents.items():
        weights = dict(zip(document.indices, document.values, strict=True))
        score = sum(
            q * idf(len(documents), holding[t]) * weights.get(t, 0.0)
            for t, q in zip(query.indices, query.values, strict=True)
        )
        if score > 0:
            scores[name] = score
    return scores


def _words_query(text: str) -> SparseVector:
    return query_vector((term, 1.0) for term in terms(text))


def test_word_matches_are_ranked_by_bm25_with_the_indexs_idf(
    store: VectorStore, worded: dict[str, str]
) -> None:
    query = _words_query("barking dogs postman")

    _, matches = store.search_with_words(_vector(99), query, 10)

    documents = {name: document_vector(terms(text), [], AVERAGE) for name, text in TEXTS.items()}
    expected = _bm25(query, documents)
    assert [worded[hit.id] for hit in matches] == sorted(expected, key=expected.__getitem__, reverse=True)
    assert [hit.score for hit in matches] == pytest.approx(sorted(expected.values(), reverse=True), rel=1e-3)


def test_the_nearest_vectors_come_back_beside_the_word_matches(
    store: VectorStore, worded: dict[str, str]
) -> None:
    nearest, matches = store.search_with_words(_vector(1), _words_query("keyboard"), 3)

    assert [hit.id for hit in nearest] == [hit.id for hit in store.search(_vector(1), 3)]
    assert worded[nearest[0].id] == "cat"
    assert [worded[hit.id] for hit in matches] == ["cat"]


def test_a_query_without_words_finds_no_word_matches(store: VectorStore, worded: dict[str, str]) -> None:
    nearest, matches = store.search_with_words(_vector(2), SparseVector(), 3)

    assert len(nearest) == 3
    assert matches == []
    assert store.search_with_words(_vector(2), _words_query("zeppelin"), 3)[1] == []


def test_filters_apply_to_word_matches(store: VectorStore) -> None:
    store.upsert([_point("dogs", 0, "home"), _point("barking", 1, "work")])

    _, matches = store.search_with_words(
        _vector(3), _words_query("dogs"), 5, VectorFilter(projects=("work",))
    )

    assert [hit.id for hit in matches] == [_point("barking", 1).id]


def test_a_filter_of_ids_keeps_the_search_to_those_points_and_an_empty_one_to_none(
    store: VectorStore, worded: dict[str, str]
) -> None:
    by_name = {name: point_id for point_id, name in worded.items()}
    kept = VectorFilter(ids=(by_name["garden"], by_name["barking"], by_name["cat"]))
    query = _words_query("barking dogs postman")

    nearest, matches = store.search_with_words(_vector(0), query, 5, kept)

    assert sorted(worded[hit.id] for hit in nearest) == ["barking", "cat", "garden"]
    assert [worded[hit.id] for hit in matches] == ["barking"]  # dogs and postman are not kept
    assert [hit.id for hit in store.search_many([_vector(0)], 5, kept)[0]] == [hit.id for hit in nearest]
    assert store.search_with_words(_vector(0), query, 5, VectorFilter(ids=())) == ([], [])


def test_rewriting_a_point_without_words_removes_its_words(
    store: VectorStore, worded: dict[str, str]
) -> None:
    cat = _point("cat", 1)
    store.upsert([VectorPoint(cat.id, cat.vector, cat.payload)])

    assert store.search_with_words(_vector(4), _words_query("keyboard"), 5)[1] == []
    assert store.count() == len(TEXTS)


def test_updating_words_changes_only_the_words_of_the_points_held(
    store: VectorStore, worded: dict[str, str]
) -> None:
    cat, dogs, garden = _point("cat", 1), _point("dogs", 0), _point("garden", 3)
    unknown = str(uuid.uuid5(uuid.NAMESPACE_URL, "unknown"))
    words = document_vector(terms("zeppelin keyboard"), [], AVERAGE)

    missing = store.update_words({cat.id: words, unknown: words, garden.id: SparseVector()})

    assert missing == [unknown]
    assert [hit.id for hit in store.search_with_words(_vector(4), _words_query("zeppelin"), 5)[1]] == [cat.id]
    assert store.search_with_words(_vector(4), _words_query("basil"), 5)[1] == []
    assert store.search_with_words(_vector(4), _words_query("postman"), 5)[1][0].id in worded
    assert [hit.id for hit in store.search(cat.vector, 1, VectorFilter(projects=("default",)))] == [cat.id]
    assert store.search(dogs.vector, 1)[0].id == dogs.id
    assert store.count() == len(TEXTS)


def test_deleted_points_leave_the_word_matches(store: VectorStore, worded: dict[str, str]) -> None:
    store.delete([_point("cat", 1).id])

    assert store.search_with_words(_vector(4), _words_query("keyboard"), 5)[1] == []


def test_an_edge_shard_made_before_words_gets_them_and_keeps_its_points(tmp_path: Path) -> None:
    path = tmp_path / "edge"
    params = qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine)
    old = qe.EdgeShard.create(str(path), qe.EdgeConfig(vectors=params))
    kept = str(uuid.uuid4())
    old.update(qe.UpdateOperation.upsert_points([qe.Point(kept, _vector(5).tolist(), {})]))
    old.close()

    for _ in range(2):  # upgraded once, then opened as it is
        store = EdgeVectorStore(path, DIM)
        try:
            store.upsert([_point("garden", 6)])
            assert store.count() == 2
            assert store.search(_vector(5), 1)[0].id == kept
            _, matches = store.search_with_words(_vector(5), _words_query("tomatoes"), 5)
            assert [hit.id for hit in matches] == [_point("garden", 6).id]
        finally:
            store.close()


def test_a_collection_made_before_words_gets_them_and_keeps_its_points(tmp_path: Path) -> None:
    client = QdrantClient(path=str(tmp_path / "qc"))
    client.create_collection("memories", models.VectorParams(size=DIM, distance=models.Distance.COSINE))
    kept = str(uuid.uuid4())
    client.upsert("memories", [models.PointStruct(id=kept, vector=_vector(5).tolist(), payload={})])
    store = QdrantServerVectorStore(client, "memories", "local", DIM)
    try:
        store.upsert([_point("garden", 6)])
        assert store.search(_vector(5), 1)[0].id == kept
        _, matches = store.search_with_words(_vector(5), _words_query("tomatoes"), 5)
        assert [hit.id for hit in matches] == [_point("garden", 6).id]
    finally:
        store.close()


def test_term_ids_of_the_query_and_the_documents_agree() -> None:
    assert term_id(terms("Barking")[0]) in document_vector(terms(TEXTS["barking"]), [], AVERAGE).indices


def test_a_server_that_cannot_add_words_serves_on_without_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = QdrantClient(path=str(tmp_path / "qc"))
    client.create_collection("memories", models.VectorParams(size=DIM, distance=models.Distance.COSINE))

    def refuse(*args: object, **kwargs: object) -> None:
        raise ValueError("404 Not Found: a server before 1.18")

    monkeypatch.setattr(client, "create_vector_name", refuse)
    store = QdrantServerVectorStore(client, "memories", "local", DIM)
    try:
        store.upsert([_point("garden", 6)])
        nearest, matches = store.search_with_words(_vector(6), _words_query("tomatoes"), 5)
        assert [hit.id for hit in nearest] == [_point("garden", 6).id]
        assert matches == []
    finally:
        store.close()
