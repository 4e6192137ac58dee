"""The word counts a recall's query is read with, kept in memory for the terms queries ask and kept
in step by the change log, so a recall can make its search before it reads the store.

Before its search a recall weighs the query's words: how many memories hold each stem (the
vocabulary, which decides whether a word is corrected: ``storage/corrections.py``), how many hold
each term in their text or their neighbours' and how many memories there are (the document
frequencies, which weigh the words' rarity). Here those counts are kept for every term a query
has asked, up to ``KEPT_TERMS`` of them (the oldest asked dropped first), with the change log's
sequence number they hold at. A change to any memory's words (``words`` in the log; a memory is
forgotten through its words) changes how many memories there are, so the rarity of every term:
the kept counts are dropped, and read again as queries ask for them.

``at_hand`` answers from the counts as last caught up, without reading the store: the recall
searches with that query and checks it inside its one read of the store, where the counts are
caught up (``Retriever.retrieve``). A query with a word that needs correcting, or a term no query
asked before, is read from the store, as without this table.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

from cognitive_memory.core.spelling import QueryTerms
from cognitive_memory.core.store import StoreOfRecord
from cognitive_memory.core.store.values import ChangeKind
from cognitive_memory.index.sparse import query_stems
from cognitive_memory.replicas.following import FollowedTable
from cognitive_memory.storage.associations import query_words
from cognitive_memory.storage.corrections import asked_stems, needs_correcting

__all__ = ["KEPT_TERMS", "FollowedWords", "WordCounts"]

# Terms whose counts are kept (each an entry of two small dicts): the asked terms of some
# thousands of queries.
KEPT_TERMS = 20_000

Counts = tuple[int, dict[str, int]]


@dataclass
class WordCounts:
    """The counts of the terms asked so far, as of change ``seq``: ``held`` the vocabulary's (own
    text), ``frequency`` the document frequencies (text or neighbours'), ``documents`` how many
    memories have their words kept (None until read). ``generation`` names the counts: no count
    kept under one generation ever changes (a change of words drops them all, for a new one)."""

    seq: int
    generation: int
    held: dict[str, int] = field(default_factory=dict)
    frequency: dict[str, int] = field(default_factory=dict)
    documents: int | None = None

    def known(self, stems: Sequence[str], terms: Sequence[str]) -> bool:
        """Whether the vocabulary counts of ``stems`` and the frequencies of ``terms`` are kept."""
        held, frequency = self.held, self.frequency
        return (
            self.documents is not None
            and all(stem in held for stem in stems)
            and all(term in frequency for term in terms)
        )

    def counts(self, terms: Sequence[str]) -> Counts:
        """(memories, the frequency of each of ``terms``) as ``Words.document_counts`` gives them."""
        assert self.documents is not None
        frequency = self.frequency
        return self.documents, {term: frequency[term] for term in terms}


class FollowedWords(FollowedTable[WordCounts]):
    """The query's word counts (``WordReads.query_terms`` and ``document_counts``) from the terms
    kept in memory, read from the store for a term not kept yet (and kept then), and for the
    corrections of a word that needs them."""

    kinds: frozenset[ChangeKind] = frozenset({"words"})
    # However many memories changed their words, the kept terms are read again once.
    rebuild_after = 1 << 62
    name = "word counts"

    def __init__(self, records: StoreOfRecord) -> None:
        super().__init__(records)
        self._generations = itertools.count(1)

    def _read_whole(self) -> WordCounts:
        return WordCounts(self._records.changes.head(), next(self._generations))

    def _take(self, table: WordCounts, seq: int, changed: Sequence[str]) -> None:
        # Any memory's words change the number of memories, so every term's rarity: the counts
        # are read again as queries ask for them.
        table.held.clear()
        table.frequency.clear()
        table.documents = None
        table.generation = next(self._generations)

    def at_hand(self, text: str) -> tuple[QueryTerms, Counts, int] | None:
        """The terms of ``text`` and the counts of its stems as ``query_terms`` and
        ``document_counts`` gave them when the counts were last caught up, and the counts'
        generation (``still``), without reading the store; None when some word needs
        correcting, a count is not kept, or the table is not built."""
        words = query_words(text)
        asked = asked_stems(words)
        terms = QueryTerms.exact(words)
        stems = query_stems(terms)
        with self._lock:
            table = self._table
            if table is None or not table.known(list(asked.values()), stems):
                return None
            if needs_correcting(asked, table.held):
                return None
            return terms, table.counts(stems), table.generation

    def still(self, generation: int) -> bool:
        """Inside a read of the store: whether the counts, caught up with the change log, are still
        those of ``generation`` (what ``at_hand`` gave then, ``query_terms`` and
        ``document_counts`` give now)."""
        return self._records.together(lambda: self._read(lambda t: t.generation == generation, lambda: False))

    def query_terms(self, text: str) -> QueryTerms:
        """The text's words with their corrections (``Words.query_terms``): read from the store
        only when some word is rare in it."""
        words = query_words(text)
        asked = asked_stems(words)
        stems = list(dict.fromkeys(asked.values()))
        counts = self._records.together(lambda: self._read(lambda t: self._held(t, stems), lambda: None))
        if counts is not None and not needs_correcting(asked, counts):
            return QueryTerms.exact(words)
        return self._records.words.query_terms(text)

    def document_counts(self, terms: Sequence[str]) -> Counts:
        """(memories in the store, how many hold each of ``terms`` in their text or their
        neighbours'), as ``Words.document_counts`` gives them."""
        from_store = self._records.words.document_counts
        return self._records.together(
            lambda: self._read(lambda table: self._frequencies(table, terms), lambda: from_store(terms))
        )

    def _held(self, table: WordCounts, stems: Sequence[str]) -> dict[str, int]:
        missing = [stem for stem in stems if stem not in table.held]
        found = self._records.words.held(missing) if missing else {}
        counts = {stem: found[stem] if stem in found else table.held[stem] for stem in stems}
        _keep(table.held, found)
        return counts

    def _frequencies(self, table: WordCounts, terms: Sequence[str]) -> Counts:
        missing = [term for term in dict.fromkeys(terms) if term not in table.frequency]
        if not missing and table.documents is not None:
            return table.counts(terms)
        documents, found = self._records.words.document_counts(missing)
        counts = {term: found[term] if term in found else table.frequency[term] for term in terms}
        table.documents = documents
        _keep(table.frequency, found)
        return documents, counts


def _keep(kept: dict[str, int], found: dict[str, int]) -> None:
    """Keep ``found`` in ``kept``, the oldest kept dropped past ``KEPT_TERMS``."""
    kept |= found
    for term in list(kept)[: max(0, len(kept) - KEPT_TERMS)]:
        del kept[term]
