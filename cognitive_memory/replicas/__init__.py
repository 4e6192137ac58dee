"""What follows the store of record, each kept in step with it: the vector index through the
outbox (``index_replication.py``, ``index_points.py``, ``index_build.py``, ``index_words.py``), and
state kept in memory for recall through the change log (``storage/change_log.py``), read once whole
and then only where the log says it changed (``following.py``): ``FollowedLinks`` keeps every
memory's links as recall's activation reads them (``links.py``), ``FollowedRanking`` every
memory's ranking row and exact vector, by column (``ranking.py``), ``FollowedWords`` the word
counts of the terms queries ask (``words.py``).
"""

from cognitive_memory.replicas.following import FollowedTable, FollowingState
from cognitive_memory.replicas.links import FollowedLinks, LinkTable
from cognitive_memory.replicas.ranking import FollowedRanking, RankingTable
from cognitive_memory.replicas.words import FollowedWords, WordCounts

__all__ = [
    "FollowedLinks",
    "FollowedRanking",
    "FollowedTable",
    "FollowedWords",
    "FollowingState",
    "LinkTable",
    "RankingTable",
    "WordCounts",
]
