"""What follows the store of record, each kept in step with it: the vector index through the
outbox (``index_replication.py``, ``index_points.py``, ``index_build.py``, ``index_words.py``), and
state kept in memory for recall through the change log (``storage/change_log.py``), read once whole
and then only where the log says it changed: ``FollowedLinks`` keeps every memory's links as
recall's activation reads them (``links.py``).
"""

from cognitive_memory.replicas.links import FollowedLinks, LinkTable

__all__ = ["FollowedLinks", "LinkTable"]
