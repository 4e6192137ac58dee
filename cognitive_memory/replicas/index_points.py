"""Index points with their words: each memory's dense vector and payload, and the sparse vector of
its text and its temporal neighbours' texts (``index/sparse.py``), read from the store of record.

A memory's words change when its own text changes and when a neighbour in time is stored, edited
or deleted: SQLite rewrites its lexical entry and queues its vector write in the same transaction
(``storage/associations.index_memory``), and replication writes it again from here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Protocol

from cognitive_memory.core.memory import CognitiveMemory
from cognitive_memory.core.terms import terms
from cognitive_memory.index.sparse import SparseVector, document_vector
from cognitive_memory.index.vector_store import VectorPoint, payload_for
from cognitive_memory.storage.word_documents import WordDocument

__all__ = ["DocumentReads", "points_of", "words_of"]


class DocumentReads(Protocol):
    """What the word vectors are weighted from (``storage.word_documents.WordDocuments``)."""

    def of(self, ids: Sequence[str]) -> dict[str, WordDocument]: ...

    def weighting_average(self) -> float: ...

    def current_average(self) -> float: ...

    def drifted(self) -> bool: ...

    def reweigh(self, *, in_background: bool = False) -> float: ...


def words_of(document: WordDocument | None, average_length: float) -> SparseVector:
    """The sparse vector of one memory's document (no document, no words)."""
    if document is None:
        return SparseVector()
    neighbours = [term for text in document.neighbours for term in _terms(text)]
    return document_vector(_terms(document.content), neighbours, average_length)


# A store weighs each recent text about three times (its own document and its two neighbours').
@lru_cache(maxsize=1024)
def _terms(text: str) -> tuple[str, ...]:
    return tuple(terms(text))


def points_of(
    memories: Sequence[CognitiveMemory], documents: Mapping[str, WordDocument], average_length: float
) -> list[VectorPoint]:
    """The index points of memories that carry a vector, with the words of their documents."""
    return [
        VectorPoint(
            m.id, m.cognitive_embedding, payload_for(m), words_of(documents.get(m.id), average_length)
        )
        for m in memories
        if m.cognitive_embedding is not None
    ]
