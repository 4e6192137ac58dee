"""Cognitive Memory: the core engine (records, encoding, storage, retrieval)."""

from cognitive_memory.core.memory import BridgeMemory, CognitiveMemory, HierarchyLevel, MemoryType
from cognitive_memory.errors import CognitiveMemoryError
from cognitive_memory.outcomes import StoreOutcome, SystemStatus
from cognitive_memory.system import CognitiveSystem

__all__ = [
    "BridgeMemory",
    "CognitiveMemory",
    "CognitiveMemoryError",
    "CognitiveSystem",
    "HierarchyLevel",
    "MemoryType",
    "StoreOutcome",
    "SystemStatus",
]
