"""Memory records, the level/type rule and input validation."""

from cognitive_memory.core.levels import classify
from cognitive_memory.core.memory import (
    BridgeMemory,
    CognitiveMemory,
    HierarchyLevel,
    MemoryType,
    SourceKind,
    Vector,
)

__all__ = [
    "BridgeMemory",
    "CognitiveMemory",
    "HierarchyLevel",
    "MemoryType",
    "SourceKind",
    "Vector",
    "classify",
]
