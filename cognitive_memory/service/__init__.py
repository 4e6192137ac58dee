"""The use-case layer: what every transport (MCP, HTTP, dashboard, hooks, CLI) calls.

Each use case validates its typed request, calls the system and returns a typed result with
its text; nothing above this package reaches into storage, the index or retrieval.
"""

from cognitive_memory.service.memory_service import MemoryService

__all__ = ["MemoryService"]
