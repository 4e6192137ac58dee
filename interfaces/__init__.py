"""Transports over the use-case layer (`cognitive_memory.service`): MCP, HTTP, dashboard, hooks."""

__all__: list[str] = []
