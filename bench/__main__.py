"""python -m bench suite|latency|locomo [...] (suite by default)"""

from __future__ import annotations

import sys

from bench import latency, locomo, suite

BENCHMARKS = {"suite": suite.main, "latency": latency.main, "locomo": locomo.main}


def main() -> None:
    name, *rest = sys.argv[1:] or ["suite"]
    if name not in BENCHMARKS:
        sys.exit(f"unknown benchmark {name!r}; choose from {', '.join(BENCHMARKS)}")
    BENCHMARKS[name](rest)


main()
