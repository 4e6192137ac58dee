"""python -m bench latency|locomo [...]"""

from __future__ import annotations

import sys

from bench import latency, load, locomo

BENCHMARKS = {"latency": latency.main, "load": load.main, "locomo": locomo.main}


def main() -> None:
    name, *rest = sys.argv[1:] or ["latency"]
    if name not in BENCHMARKS:
        sys.exit(f"unknown benchmark {name!r}; choose from {', '.join(BENCHMARKS)}")
    BENCHMARKS[name](rest)


main()
