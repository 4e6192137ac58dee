"""python -m bench suite|latency|load|git-load|locomo|duplicates|readmes [...] (suite by default)"""

from __future__ import annotations

import sys

from bench import duplicates, git_load, latency, load, locomo, readmes, suite

BENCHMARKS = {
    "suite": suite.main,
    "latency": latency.main,
    "load": load.main,
    "git-load": git_load.main,
    "locomo": locomo.main,
    "duplicates": duplicates.main,
    "readmes": readmes.main,
}


def main() -> None:
    name, *rest = sys.argv[1:] or ["suite"]
    if name not in BENCHMARKS:
        sys.exit(f"unknown benchmark {name!r}; choose from {', '.join(BENCHMARKS)}")
    BENCHMARKS[name](rest)


main()
