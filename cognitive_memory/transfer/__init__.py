"""Moving memories in and out of a store: the export format (`format`), reading and checking an
import file (`reading`), the official `memory` server's knowledge graph (`official_memory`) and
the export and import themselves (`exchange`)."""

__all__: list[str] = []
