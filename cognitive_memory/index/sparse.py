"""A memory's words as a sparse vector: BM25F document weights, the IDF left to the index.

Each memory's vector holds, for every term of its text (``core/terms.py``: FTS5's tokenizer and
Porter stemmer) and of its temporal neighbours' texts, one BM25F weight: the term's count in the
memory's own text plus ``CONTEXT_WEIGHT`` times its count in the neighbours' texts, saturated once
(``K1``) and normalised by the combined length (own length + the neighbours' length, unweighted, as
FTS5's ``bm25()`` measures a row over all its columns) against the store's average combined length
(``B``). The index multiplies each weight by
the term's inverse document frequency at query time (Qdrant's ``Modifier.Idf``:
``ln((N - n + 0.5) / (n + 0.5) + 1)``, BM25's), so a stored vector never changes as the store grows,
except through the average length it was weighted with (``drifted``).

A term's dimension is the first four bytes of its BLAKE2b digest (``term_id``): stable across
processes and versions, unlike ``hash()``. Two terms may share a dimension: with V distinct terms
about V^2 / 2^33 pairs do (about 1 at 100,000 terms, about 100 at a million). Such a pair is
searched as one word: each finds the other's memories too, under their pooled (lower) IDF.

A query is weighted terms (``query_vector``): a word typed once weighs 1; a corrected or expanded
term may weigh less; a recall's query weighs a term its words give twice (``going``, ``go``) twice,
as FTS5 does. A recall's query (``words_query``) also carries, per term, the factor that
turns Qdrant's IDF into FTS5's (``idf_factor``), from the counts of the store's memories holding
it: so the index ranks words as the lexical index's ``bm25()`` does.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from cognitive_memory.core import terms as tokenizer
from cognitive_memory.core.spelling import QueryTerms

__all__ = [
    "AVERAGE_DRIFT",
    "B",
    "CONTEXT_WEIGHT",
    "K1",
    "MIN_IDF",
    "WORDS",
    "SparseVector",
    "combined_length",
    "document_vector",
    "drifted",
    "idf_factor",
    "query_vector",
    "query_stems",
    "term_id",
    "words_query",
]

# The name of the sparse vector beside the dense one in every backend.
WORDS = "words"
# BM25's saturation and length normalisation (FTS5's bm25() uses the same).
K1 = 1.2
B = 0.75
# How much a temporal neighbour's word counts against a memory's own (the lexical index's too).
CONTEXT_WEIGHT = 0.3
# The share by which the store's average length may move from the one its vectors were weighted
# with before they are weighted again: at 10 % a memory of average length is off by under 5 %.
AVERAGE_DRIFT = 0.1
# FTS5's bm25() gives a term held by half the store or more this IDF instead of a negative one.
MIN_IDF = 1e-6


@dataclass(frozen=True, slots=True)
class SparseVector:
    """Non-zero dimensions in increasing order and their values."""

    indices: tuple[int, ...] = ()
    values: tuple[float, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.indices)


@lru_cache(maxsize=65536)
def term_id(term: str) -> int:
    """The term's dimension: a 32-bit hash, the same in every process (see the module docstring)."""
    return int.from_bytes(hashlib.blake2b(term.encode(), digest_size=4).digest(), "big")


def combined_length(own: Sequence[str], neighbours: Sequence[str]) -> float:
    """A memory's length for BM25F: its own terms plus its neighbours', as FTS5's ``bm25()`` counts
    a row's length (the context weight counts in the term frequencies only)."""
    return len(own) + len(neighbours)


def document_vector(own: Sequence[str], neighbours: Sequence[str], average_length: float) -> SparseVector:
    """The BM25F weights of a memory's terms (``own``) and its neighbours' (``neighbours``, all
    their texts' terms together), normalised against ``average_length`` (see the module docstring)."""
    counts: dict[int, float] = {}
    for term in own:
        key = term_id(term)
        counts[key] = counts.get(key, 0.0) + 1.0
    for term in neighbours:
        key = term_id(term)
        counts[key] = counts.get(key, 0.0) + CONTEXT_WEIGHT
    if not counts:
        return SparseVector()
    length = combined_length(own, neighbours)
    relative = length / average_length if average_length > 0 else 1.0
    norm = K1 * (1.0 - B + B * relative)
    indices = sorted(counts)
    values = tuple(counts[i] * (K1 + 1.0) / (counts[i] + norm) for i in indices)
    return SparseVector(tuple(indices), values)


def query_vector(terms: Iterable[tuple[str, float]]) -> SparseVector:
    """A query's vector from weighted terms (term, weight > 0); a term given twice keeps its
    larger weight, and terms that share a dimension add up."""
    best: dict[str, float] = {}
    for term, weight in terms:
        if weight > 0 and weight > best.get(term, 0.0):
            best[term] = weight
    summed: dict[int, float] = {}
    for term, weight in best.items():
        key = term_id(term)
        summed[key] = summed.get(key, 0.0) + weight
    indices = sorted(summed)
    return SparseVector(tuple(indices), tuple(summed[i] for i in indices))


def query_stems(query: QueryTerms) -> list[str]:
    """The index's terms of ``query``'s words and corrections (the tokenizer may split a word)."""
    return sorted({term for word, _ in query.pairs() for term in tokenizer.terms(word)})


def words_query(query: QueryTerms, total: int = 0, held: Mapping[str, int] | None = None) -> SparseVector:
    """A recall's query vector: each word and correction of ``query`` as the index's terms, each
    weighing its word's weight (1 as typed, below 1 a correction); a term that several of them
    give weighs the sum of their weights, as FTS5's ``bm25()`` scores each of the query's words
    (``going`` and ``go``, ``dish`` and ``dishes``) even when they stem alike. Given the store's
    counts (``total`` memories, ``held``: how many hold each term, in their text or their
    neighbours'), each weight is also multiplied by ``idf_factor``, so the index's IDF becomes
    FTS5's."""
    weights: dict[str, float] = {}
    for word, weight in query.pairs():
        for term in dict.fromkeys(tokenizer.terms(word)):
            weights[term] = weights.get(term, 0.0) + weight
    if held is not None:
        weights = {term: weight * idf_factor(total, held.get(term, 0)) for term, weight in weights.items()}
    return query_vector(weights.items())


def idf_factor(total: int, held: int) -> float:
    """The factor that turns the index's IDF of a term ``held`` by that many of ``total`` memories
    into FTS5's: with x = (total - held + 0.5) / (held + 0.5), Qdrant's modifier gives ln(x + 1),
    FTS5's ``bm25()`` ln x, never below ``MIN_IDF`` (a word found in half the store or more adds
    next to nothing, where Qdrant still gives it ln 2)."""
    x = (total - min(held, total) + 0.5) / (min(held, total) + 0.5)
    return max(math.log(x), MIN_IDF) / math.log(x + 1.0)


def drifted(weighted_with: float, current: float) -> bool:
    """True when the store's average length ``current`` has moved more than ``AVERAGE_DRIFT``
    from the one the vectors were weighted with: time to weight them again."""
    if weighted_with <= 0:
        return current > 0
    return abs(current - weighted_with) > AVERAGE_DRIFT * weighted_with
