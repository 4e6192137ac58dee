"""python -m bench latency|load|git-load|locomo [...]"""

from __future__ import annotations

import sys

from bench import git_load, latency, load, locomo

BENCHMARKS = {"git-load": git_load.main, "latency": latency.main, "load": load.main, "locomo": locomo.main}


def main() -> None:
    name, *rest = sys.argv[1:] or ["latency"]
    if name not in BENCHMARKS:
        sys.exit(f"unknown benchmark {name!r}; choose from {', '.join(BENCHMARKS)}")
    BENCHMARKS[name](rest)


main()
