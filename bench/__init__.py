"""Benchmarks: ``python -m bench [latency] ...`` (see docs/performance.md)."""

__all__: list[str] = []
