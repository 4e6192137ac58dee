"""What follows the store of record through its change log (``storage/change_log.py``): state
kept in memory for recall, read once whole and then only where the log says it changed.

``FollowedLinks`` keeps every memory's links as recall's activation reads them (``links.py``).
"""

from cognitive_memory.replicas.links import FollowedLinks, LinkTable

__all__ = ["FollowedLinks", "LinkTable"]
