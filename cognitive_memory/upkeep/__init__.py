"""Upkeep of the stores: health checks, repair, and the vector index opened outside a system.

The use cases behind ``memory_system doctor`` (and the dashboard's status page), ``qdrant
migrate``, ``qdrant status`` and the index side of ``restore``. ``checkup`` runs the checks in
order; ``health`` holds the result every check returns; ``installation`` checks the settings, the
data directory and the model, ``database`` the SQLite file and its rows, ``vectors`` the index
(and rebuilds it), ``sources`` the loaded memories, ``round_trip`` a real store-recall-delete;
``indexes`` opens, fills and counts an index from SQLite's vectors.
"""

from cognitive_memory.upkeep.checkup import run_checks, serving_checks
from cognitive_memory.upkeep.database import check_rows, check_sqlite
from cognitive_memory.upkeep.health import REPAIR_HINT, CheckResult, Status, count_phrase, skipped
from cognitive_memory.upkeep.indexes import (
    embedded_point_count,
    migrate_to_server,
    open_embedded_index,
    open_server_index,
)
from cognitive_memory.upkeep.installation import (
    SettingsSource,
    check_config,
    check_data_dir,
    check_model,
    mask_secret,
)
from cognitive_memory.upkeep.round_trip import SCRATCH_TAG, check_round_trip
from cognitive_memory.upkeep.sources import check_loaded_sources, orphaned_memories
from cognitive_memory.upkeep.vectors import (
    after_set_aside,
    check_counts,
    check_vectors,
    open_system,
    open_system_for_repair,
    repair_index,
    totals,
)

__all__ = [
    "REPAIR_HINT",
    "SCRATCH_TAG",
    "CheckResult",
    "SettingsSource",
    "Status",
    "after_set_aside",
    "check_config",
    "check_counts",
    "check_data_dir",
    "check_loaded_sources",
    "check_model",
    "check_round_trip",
    "check_rows",
    "check_sqlite",
    "check_vectors",
    "count_phrase",
    "embedded_point_count",
    "mask_secret",
    "migrate_to_server",
    "open_embedded_index",
    "open_server_index",
    "open_system",
    "open_system_for_repair",
    "orphaned_memories",
    "repair_index",
    "run_checks",
    "serving_checks",
    "skipped",
    "totals",
]
