"""python -m bench <name> [...]: the names are BENCHMARKS' keys below (suite by default)."""

from __future__ import annotations

import sys

from bench import (
    answer_size,
    background_index,
    change_log,
    dumps,
    duplicates,
    first_recall,
    flood,
    git_load,
    hooks,
    latency,
    links,
    lived_in,
    load,
    locomo,
    locomo_move,
    metadata,
    notes,
    offtopic,
    repairs,
    reweigh,
    server,
    spelling,
    suite,
    tool_bytes,
    words,
)

BENCHMARKS = {
    "suite": suite.main,
    "first-recall": first_recall.main,
    "latency": latency.main,
    "load": load.main,
    "git-load": git_load.main,
    "locomo": locomo.main,
    "locomo-move": locomo_move.main,
    "duplicates": duplicates.main,
    "flood": flood.main,
    "notes": notes.main,
    "offtopic": offtopic.main,
    "answer-size": answer_size.main,
    "lived-in": lived_in.main,
    "links": links.main,
    "hooks": hooks.main,
    "background-index": background_index.main,
    "change-log": change_log.main,
    "compare-dumps": dumps.main,
    "tool-bytes": tool_bytes.main,
    "metadata": metadata.main,
    "spelling": spelling.main,
    "repairs": repairs.main,
    "words": words.main,
    "server": server.main,
    "reweigh": reweigh.main,
}


def main() -> None:
    name, *rest = sys.argv[1:] or ["suite"]
    if name not in BENCHMARKS:
        sys.exit(f"unknown benchmark {name!r}; choose from {', '.join(BENCHMARKS)}")
    BENCHMARKS[name](rest)


main()
