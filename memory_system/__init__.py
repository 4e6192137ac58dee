"""The service CLI (typer): ``memory_system serve mcp``, ``status``, ``store``, ``recall``."""

__all__: list[str] = []
