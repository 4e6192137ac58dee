"""The lifecycle of memories beyond store and update: forgetting to the trash, pruning,
restoring, purging (`forgetting`) and consolidating near duplicates (`consolidation`)."""

__all__: list[str] = []
